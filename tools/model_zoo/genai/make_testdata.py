#!/opt/inferd/models-venv/bin/python
"""Makes genai/testdata/models/: the tiny exports genai's CI tests load, with their references.

Exports Llama- and GPT-2-style models (hidden 16, 2 layers, seeded random weights with a wide
initializer; about 300 KB each) with export_hf.py, keeps model.onnx and the JSON files (not the
checkpoint), and writes expected.json: the prompt, its ids (Hugging Face tokenizers) and the
greedy ids of ONNX Runtime driving the decode loop (ort_greedy.py's loop) for 40 new tokens.

Usage: tools/model_zoo/genai/make_testdata.py genai/testdata/models
"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_hf  # noqa: E402
import ort_greedy  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

PROMPT = "The Free Software Foundation may publish revised versions"
NEW_TOKENS = 40


def main():
    out = sys.argv[1]
    tmp = tempfile.mkdtemp()
    for style in ("llama", "gpt2"):
        export_hf.export(style, os.path.join(tmp, style), hidden=16, layers=2, opset=17, seed=0,
                         init_range=0.3)
        dst = os.path.join(out, style)
        os.makedirs(dst, exist_ok=True)
        for f in ("model.onnx", "config.json", "generation_config.json", "tokenizer.json",
                  "tokenizer_config.json"):
            shutil.copy(os.path.join(tmp, style, f), dst)
        tok = Tokenizer.from_file(os.path.join(dst, "tokenizer.json"))
        ids = tok.encode(PROMPT, add_special_tokens=True).ids
        with open(os.path.join(dst, "generation_config.json")) as f:
            eos = json.load(f).get("eos_token_id")
        eos = set(eos if isinstance(eos, list) else [eos])
        want = ort_greedy.greedy(dst, ids, NEW_TOKENS, eos)
        with open(os.path.join(dst, "expected.json"), "w") as f:
            json.dump({"prompt": PROMPT, "prompt_ids": ids, "greedy_ids": want,
                       "reference": "onnxruntime greedy loop (ort_greedy.py)"}, f)
        print(style, len(want), "tokens")


if __name__ == "__main__":
    main()
