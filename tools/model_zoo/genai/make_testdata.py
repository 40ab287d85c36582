#!/opt/inferd/models-venv/bin/python
"""Makes genai/testdata/models/: the tiny exports genai's CI tests load, with their references.

Exports Llama- and GPT-2-style models (hidden 16, 2 layers, seeded random weights with a wide
initializer; about 300 KB each) with export_hf.py, keeps model.onnx and the JSON files (not the
checkpoint), and writes expected.json: the prompt, its ids (Hugging Face tokenizers) and the
greedy ids of ONNX Runtime driving the decode loop (ort_greedy.py's loop) for 40 new tokens.

llama_genai is the ONNX Runtime GenAI layout (export_genai.py: onnxruntime-genai's model builder,
int4 with accuracy_level 1, hidden 64, 2 layers): its expected.json also holds the greedy ids of onnxruntime-genai's own
generator, which must equal the ORT loop's.

Usage: tools/model_zoo/genai/make_testdata.py genai/testdata/models [llama,gpt2,llama_genai]
"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_genai  # noqa: E402
import export_hf  # noqa: E402
import ort_greedy  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

PROMPT = "The Free Software Foundation may publish revised versions"
NEW_TOKENS = 40


def ortgenai_greedy(model_dir, ids, new_tokens):
    """onnxruntime-genai's generator, greedy, on the same prompt ids (EOS excluded)."""
    import onnxruntime_genai as og
    model = og.Model(model_dir)
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(ids) + new_tokens, do_sample=False)
    gen = og.Generator(model, params)
    gen.append_tokens(ids)
    out = []
    while not gen.is_done() and len(out) < new_tokens:
        gen.generate_next_token()
        out.append(int(gen.get_next_tokens()[0]))
    with open(os.path.join(model_dir, "genai_config.json")) as f:
        eos = json.load(f)["model"]["eos_token_id"]
    eos = set(eos if isinstance(eos, list) else [eos])
    for i, t in enumerate(out):  # cut at the first EOS, as the ORT loop stops there
        if t in eos:
            return out[:i]
    return out


def make_genai(out):
    dst = os.path.join(out, "llama_genai")
    if os.path.isdir(dst):
        shutil.rmtree(dst)
    export_genai.export("llama", dst, hidden=64, layers=2, seed=0, init_range=0.3,
                        accuracy_level=1)
    tok = Tokenizer.from_file(os.path.join(dst, "tokenizer.json"))
    ids = tok.encode(PROMPT, add_special_tokens=True).ids
    with open(os.path.join(dst, "genai_config.json")) as f:
        cfg = json.load(f)
    # A short buffer keeps the test's KV blocks small; the ORT loop binds the same length.
    cfg["search"]["max_length"] = 128
    with open(os.path.join(dst, "genai_config.json"), "w") as f:
        json.dump(cfg, f, indent=4)
    eos = cfg["model"]["eos_token_id"]
    eos = set(eos if isinstance(eos, list) else [eos])
    want = ort_greedy.greedy(dst, ids, NEW_TOKENS, eos)
    og_ids = ortgenai_greedy(dst, ids, NEW_TOKENS)
    if og_ids != want:
        raise SystemExit("onnxruntime-genai %s != ORT loop %s" % (og_ids, want))
    with open(os.path.join(dst, "expected.json"), "w") as f:
        json.dump({"prompt": PROMPT, "prompt_ids": ids, "greedy_ids": want,
                   "reference": "onnxruntime greedy loop (ort_greedy.py, shared buffer) and "
                                "onnxruntime-genai 0.18's generator (equal)"}, f)
    print("llama_genai", len(want), "tokens", sorted(os.listdir(dst)))


def main():
    out = sys.argv[1]
    only = sys.argv[2].split(",") if len(sys.argv) > 2 else ["llama", "gpt2", "llama_genai"]
    tmp = tempfile.mkdtemp()
    if "llama_genai" in only:
        make_genai(out)
    for style in [s for s in ("llama", "gpt2") if s in only]:
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
