#!/opt/inferd/models-venv/bin/python
"""Decode tokens/s and prefill ms: inferd against onnxruntime-genai, same model, prompt, threads.

The model is a Hugging Face layout folder (export_hf.py) or an ONNX Runtime GenAI folder
(export_genai.py, the model builder's). For the first, onnxruntime-genai runs the same
model.onnx through a genai_config.json written here (Concat-based past/present, no shared
buffer: the layout as exported); for the second, the folder's own genai_config.json with the
thread count set. Both engines get the prompt ids inferd's tokenizer gave, greedy, for the same
number of new tokens. inferd runs `inferctl generate --json`. The two alternate, `--rounds`
times; the table shows medians.

Usage: bench_vs_ortgenai.py MODEL_DIR --inferctl bazel-bin/tools/inferctl/inferctl
           [--prompt TEXT] [--new-tokens 64] [--threads 1,2] [--rounds 5]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import onnx
import onnxruntime_genai as og


def own_genai_folder(model_dir, threads):
    """A GenAI folder's files linked, its genai_config.json copied with `threads` set."""
    out = tempfile.mkdtemp()
    for f in os.listdir(model_dir):
        if f != "genai_config.json":
            os.symlink(os.path.abspath(os.path.join(model_dir, f)), os.path.join(out, f))
    with open(os.path.join(model_dir, "genai_config.json")) as f:
        config = json.load(f)
    config["model"]["decoder"]["session_options"].update(
        {"intra_op_num_threads": threads, "inter_op_num_threads": 1})
    with open(os.path.join(out, "genai_config.json"), "w") as f:
        json.dump(config, f, indent=1)
    return out


def genai_folder(model_dir, threads):
    """A folder onnxruntime-genai can load: the model file linked, genai_config.json written."""
    if os.path.exists(os.path.join(model_dir, "genai_config.json")):
        return own_genai_folder(model_dir, threads)
    m = onnx.load(os.path.join(model_dir, "model.onnx"), load_external_data=False)
    inputs = {i.name: i for i in m.graph.input}
    pasts = sorted(n for n in inputs if n.startswith("past_key_values.") and n.endswith(".key"))
    dims = inputs[pasts[0]].type.tensor_type.shape.dim
    kv_heads, head = dims[1].dim_value, dims[3].dim_value
    logits = [o for o in m.graph.output if o.name == "logits"][0]
    vocab = logits.type.tensor_type.shape.dim[2].dim_value
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    gen = json.load(open(os.path.join(model_dir, "generation_config.json")))
    eos = gen.get("eos_token_id", cfg.get("eos_token_id", 0))
    heads = cfg.get("num_attention_heads", cfg.get("n_head"))
    out = tempfile.mkdtemp()
    os.symlink(os.path.abspath(os.path.join(model_dir, "model.onnx")),
               os.path.join(out, "model.onnx"))
    decoder_inputs = {"input_ids": "input_ids",
                      "past_key_names": "past_key_values.%d.key",
                      "past_value_names": "past_key_values.%d.value"}
    if "attention_mask" in inputs:
        decoder_inputs["attention_mask"] = "attention_mask"
    if "position_ids" in inputs:
        decoder_inputs["position_ids"] = "position_ids"
    config = {
        "model": {
            "bos_token_id": cfg.get("bos_token_id", 0), "eos_token_id": eos,
            "pad_token_id": eos if isinstance(eos, int) else eos[0],
            "context_length": cfg.get("max_position_embeddings", cfg.get("n_positions", 512)),
            "vocab_size": vocab, "type": "llama",
            "decoder": {
                "session_options": {"intra_op_num_threads": threads, "inter_op_num_threads": 1,
                                    "provider_options": []},
                "filename": "model.onnx", "head_size": head,
                "hidden_size": heads * head if heads else head,
                "num_attention_heads": heads, "num_hidden_layers": len(pasts),
                "num_key_value_heads": kv_heads,
                "inputs": decoder_inputs,
                "outputs": {"logits": "logits", "present_key_names": "present.%d.key",
                            "present_value_names": "present.%d.value"},
            },
        },
        "search": {"do_sample": False, "num_beams": 1, "max_length": 512, "min_length": 0,
                   "past_present_share_buffer": False, "repetition_penalty": 1.0,
                   "temperature": 1.0, "top_k": 1, "top_p": 1.0},
    }
    with open(os.path.join(out, "genai_config.json"), "w") as f:
        json.dump(config, f, indent=1)
    return out


def run_ortgenai(model, prompt_ids, new_tokens):
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(prompt_ids) + new_tokens, do_sample=False)
    gen = og.Generator(model, params)
    t0 = time.perf_counter()
    gen.append_tokens(prompt_ids)  # the prefill: runs the model on the prompt
    prefill_ms = (time.perf_counter() - t0) * 1000
    t1 = time.perf_counter()
    steps = 0
    while not gen.is_done() and steps < new_tokens - 1:
        gen.generate_next_token()
        steps += 1
    decode_s = time.perf_counter() - t1
    seq = list(gen.get_sequence(0))
    return {"prefill_ms": prefill_ms, "tokens_per_second": steps / decode_s if decode_s else 0,
            "token_ids": seq[len(prompt_ids):]}


def run_inferd(inferctl, model_dir, prompt, new_tokens, threads):
    # --warmup 1: inferd's figures from a warm process, as onnxruntime-genai's (its model is
    # loaded once and reused across rounds).
    out = subprocess.run([inferctl, "generate", model_dir, "--prompt", prompt,
                          "--max-new-tokens", str(new_tokens), "--threads", str(threads),
                          "--warmup", "1", "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model_dir")
    p.add_argument("--inferctl", required=True)
    p.add_argument("--prompt", default="The Free Software Foundation may publish revised and "
                   "new versions of the General Public License from time to time.")
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    rows = []
    for threads in [int(t) for t in args.threads.split(",")]:
        folder = genai_folder(args.model_dir, threads)
        model = og.Model(folder)
        first = run_inferd(args.inferctl, args.model_dir, args.prompt, args.new_tokens, threads)
        prompt_ids = first["prompt_token_ids"]
        res = {"inferd": [], "ortgenai": []}
        same = None
        for _ in range(args.rounds):  # alternated
            a = run_inferd(args.inferctl, args.model_dir, args.prompt, args.new_tokens, threads)
            b = run_ortgenai(model, prompt_ids, args.new_tokens)
            res["inferd"].append(a)
            res["ortgenai"].append(b)
            n = min(len(a["token_ids"]), len(b["token_ids"]))
            same = a["token_ids"][:n] == b["token_ids"][:n]
        for engine in ("inferd", "ortgenai"):
            rows.append((threads, engine, len(prompt_ids),
                         statistics.median(r["prefill_ms"] for r in res[engine]),
                         statistics.median(r["tokens_per_second"] for r in res[engine]),
                         same))
    print("| threads | engine | prompt tokens | prefill ms (median) | decode tok/s (median) | "
          "same greedy tokens |")
    print("|---|---|---|---|---|---|")
    for t, e, n, pre, tps, same in rows:
        print("| %d | %s | %d | %.2f | %.1f | %s |" % (t, e, n, pre, tps, same))


if __name__ == "__main__":
    main()
