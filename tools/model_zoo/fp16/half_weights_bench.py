#!/usr/bin/env python3
"""Half weights against converted weights on the zoo's float16 models: per model and thread count,
the median latency and peak resident memory of inferd reading its MatMul/Gemm weights in half
precision (the default), of inferd converting them to float32 (--convert-half-weights), and of
ONNX Runtime, the three alternated round by round so machine noise hits all.

  half_weights_bench.py --inferctl bazel-bin/tools/inferctl/inferctl [--zoo DIR]
      [--only a,b] [--threads "1 2"] [--rounds 3] [--runs 20]
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from ort_compare import engines  # noqa: E402

MODELS = ["bert_encoder.fp16", "vit_tiny.fp16", "llama_prefill.fp16", "llama_decode.fp16",
          "resnet18.fp16", "mobilenet_v2.fp16"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--inferctl", required=True)
    p.add_argument("--zoo", default=os.path.expanduser("~/.cache/inferd/zoo"))
    p.add_argument("--only", default="")
    p.add_argument("--threads", default="1 2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=20)
    args = p.parse_args()
    names = args.only.split(",") if args.only else MODELS
    print("| model | threads | half ms | converted ms | ORT ms | half / converted | half / ORT "
          "| peak RSS MiB half / converted / ORT |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for name in names:
        d = os.path.join(args.zoo, name)
        with open(os.path.join(d, "meta.json")) as f:
            meta = json.load(f)
        model = os.path.join(d, "model.onnx")
        feeds = [(i["name"], os.path.join(d, i["file"])) for i in meta["inputs"]]
        for t in [int(x) for x in args.threads.split()]:
            ms = {"half": [], "conv": [], "ort": []}
            rss = {"half": [], "conv": [], "ort": []}
            for _ in range(args.rounds):
                for key in ("half", "conv", "ort"):
                    if key == "ort":
                        r = engines.run_ort(model, feeds, threads=t, runs=args.runs, warmup=2)
                    else:
                        extra = ["--convert-half-weights"] if key == "conv" else []
                        r = engines.run_inferd(args.inferctl, model, feeds, threads=t,
                                               runs=args.runs, warmup=2, extra=extra)
                    if not r.ok:
                        if key != "ort":
                            sys.exit("%s %s: %s" % (name, key, r.error))
                        print("# %s: ONNX Runtime fails: %s" % (name, r.error[:200]),
                              file=sys.stderr)
                        continue
                    ms[key].append(r.p50_ms)
                    rss[key].append(r.peak_rss_mib)
            med = {k: statistics.median(v) if v else float("nan") for k, v in ms.items()}
            peak = {k: max(v) if v else float("nan") for k, v in rss.items()}
            print("| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f / %.0f / %.0f |" % (
                name, t, med["half"], med["conv"], med["ort"], med["half"] / med["conv"],
                med["half"] / med["ort"], peak["half"], peak["conv"], peak["ort"]), flush=True)


if __name__ == "__main__":
    main()
