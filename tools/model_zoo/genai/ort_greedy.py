#!/opt/inferd/venv/bin/python
"""The reference decode loop: ONNX Runtime driving a decoder export, greedy.

Feeds the prompt ids (prefill), then one token per step, passing each step's present.N.* back as
past_key_values.N.* -- the loop inferd's genai/ runs, with ONNX Runtime as the engine. For an
ONNX Runtime GenAI export (genai_config.json with past_present_share_buffer) the pasts are
buffers of the maximum length from the start, as onnxruntime-genai binds them. Prints one JSON
line: {"token_ids": [...]} (the EOS that stops it excluded).

Usage: ort_greedy.py MODEL_DIR --prompt-ids 1,2,3 [--max-new-tokens 32] [--eos 2,3]
"""
import argparse
import json
import os

import numpy as np
import onnxruntime as ort


def shared_buffer_length(model_dir):
    """The buffer length of a GenAI export whose past and present share one buffer, else 0."""
    path = os.path.join(model_dir, "genai_config.json")
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        cfg = json.load(f)
    search = cfg.get("search", {})
    if not search.get("past_present_share_buffer", False):
        return 0
    return int(search.get("max_length", cfg["model"]["context_length"]))


def model_file(model_dir):
    path = os.path.join(model_dir, "genai_config.json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)["model"]["decoder"]["filename"]
    return "model.onnx"


def greedy(model_dir, prompt, max_new, eos, threads=1):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    sess = ort.InferenceSession(os.path.join(model_dir, model_file(model_dir)), opts,
                                providers=["CPUExecutionProvider"])
    inputs = {i.name: i for i in sess.get_inputs()}
    caches = [n for n in inputs if n.startswith("past_key_values.")]
    buffer = shared_buffer_length(model_dir)
    feeds = {}
    for n in caches:
        shape = inputs[n].shape
        kv_heads = shape[1] if isinstance(shape[1], int) else None
        head = shape[3] if isinstance(shape[3], int) else None
        if kv_heads is None or head is None:  # the builder leaves head_size symbolic
            with open(os.path.join(model_dir, "genai_config.json")) as f:
                dec = json.load(f)["model"]["decoder"]
            kv_heads, head = dec["num_key_value_heads"], dec["head_size"]
        feeds[n] = np.zeros((1, kv_heads, buffer, head), dtype=np.float32)
    ids = list(prompt)
    out_ids = []
    length = 0
    step = np.array([ids], dtype=np.int64)
    for _ in range(max_new):
        n = step.shape[1]
        feeds["input_ids"] = step
        if "attention_mask" in inputs:
            feeds["attention_mask"] = np.ones((1, length + n), dtype=np.int64)
        if "position_ids" in inputs:
            feeds["position_ids"] = np.arange(length, length + n, dtype=np.int64)[None, :]
        outs = sess.run(None, feeds)
        names = [o.name for o in sess.get_outputs()]
        res = dict(zip(names, outs))
        nxt = int(np.argmax(res["logits"][0, -1]))
        length += n
        if nxt in eos:
            break
        out_ids.append(nxt)
        for c in caches:
            feeds[c] = res["present." + c[len("past_key_values."):]]
        step = np.array([[nxt]], dtype=np.int64)
    return out_ids


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model_dir")
    p.add_argument("--prompt-ids", required=True)
    p.add_argument("--max-new-tokens", type=int, default=32)
    p.add_argument("--eos", default="")
    args = p.parse_args()
    prompt = [int(x) for x in args.prompt_ids.split(",")]
    eos = {int(x) for x in args.eos.split(",") if x}
    print(json.dumps({"token_ids": greedy(args.model_dir, prompt, args.max_new_tokens, eos)}))


if __name__ == "__main__":
    main()
