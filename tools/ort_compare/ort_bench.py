#!/opt/inferd/venv/bin/python
"""Times a model in ONNX Runtime (the `onnxruntime` wheel, CPU execution provider) the way
`inferctl run` times it in inferd: W warm-up runs, then N timed runs one at a time, and prints the
latency percentiles in the same format ("p50 X ms, p90 Y ms, p99 Z ms", nearest rank).

Usage: ort_bench.py --model MODEL.onnx [--input NAME=FILE.npy]... [--runs N] [--warmup W]
                    [--threads T] [--opt-level all|extended|basic|disabled]
                    [--output-dir DIR] [--profile DIR]
       ort_bench.py --baseline      (imports numpy and onnxruntime and exits: the harness's own
                                     resident memory, for reading peak RSS figures)

Every model input must be given as a .npy file, so that inferd and ORT read the very same bytes.
Session options: intra_op_num_threads T, inter_op_num_threads 1, sequential execution, graph
optimizations at ORT's default level ('all'). Inputs are bound once as OrtValues and each run is
`run_with_ort_values`, so a timed run has no numpy conversion in it. `--output-dir DIR` writes
each output of the last run to DIR/<name>.npy ('/' in names becomes '_', as inferctl does).
`--profile DIR` turns on ORT's profiler and prints the median native model_run time and the time
by operator type (the profiler's own overhead included).
"""

import argparse
import collections
import json
import math
import os
import sys
import time

import numpy as np


def percentile(sorted_ms, p):
    if not sorted_ms:
        return 0.0
    i = min(len(sorted_ms) - 1, max(0, int(math.ceil(p / 100.0 * len(sorted_ms))) - 1))
    return sorted_ms[i]


def output_file(out_dir, name):
    return os.path.join(out_dir, name.replace("/", "_") + ".npy")


def summarize_profile(path, runs):
    with open(path) as f:
        events = json.load(f)
    model_runs = sorted(e["dur"] / 1000.0 for e in events
                        if e.get("cat") == "Session" and e.get("name") == "model_run")
    by_op = collections.Counter()
    for e in events:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            by_op[e.get("args", {}).get("op_name", "?")] += e["dur"] / 1000.0
    print("ORT profiler: model_run p50 %.3f ms over %d runs (warm-up included); %s" % (
        percentile(model_runs, 50), len(model_runs), path))
    total = sum(by_op.values()) or 1e-9
    for op, ms in by_op.most_common():
        print("  %-24s %.4f ms/run %5.1f%%" % (op, ms / max(1, len(model_runs)), 100 * ms / total))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model")
    p.add_argument("--input", action="append", default=[], help="NAME=FILE.npy")
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--opt-level", default="all",
                   choices=["all", "extended", "basic", "disabled"])
    p.add_argument("--output-dir")
    p.add_argument("--profile", metavar="DIR")
    p.add_argument("--baseline", action="store_true")
    args = p.parse_args()
    import onnxruntime as ort
    if args.baseline:
        print("onnxruntime %s imported" % ort.__version__)
        return 0
    if not args.model:
        p.error("--model is required")
    if args.runs < 1 or args.warmup < 0 or args.threads < 1:
        p.error("--runs and --threads must be at least 1, --warmup at least 0")

    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = {
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL}[args.opt_level]
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(args.profile, "ort_profile")
    try:
        sess = ort.InferenceSession(args.model, so, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001  ORT's own message, one line, for the caller's table
        print("ort_bench.py: cannot load '%s': %s" % (args.model, str(e).strip().splitlines()[0]),
              file=sys.stderr)
        return 1
    given = {}
    for spec in args.input:
        name, sep, path = spec.partition("=")
        if not sep:
            p.error("--input takes NAME=FILE.npy")
        given[name] = np.load(path)
    feeds = {}
    for i in sess.get_inputs():
        if i.name not in given:
            print("ort_bench.py: no --input for model input '%s'" % i.name, file=sys.stderr)
            return 2
        feeds[i.name] = ort.OrtValue.ortvalue_from_numpy(given[i.name])
    names = [o.name for o in sess.get_outputs()]
    opts = ort.RunOptions()
    try:
        for _ in range(args.warmup):
            outputs = sess.run_with_ort_values(names, feeds, opts)
        ms = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            outputs = sess.run_with_ort_values(names, feeds, opts)
            ms.append((time.perf_counter() - t0) * 1e3)
    except Exception as e:  # noqa: BLE001
        print("ort_bench.py: run failed: %s" % str(e).strip().splitlines()[0], file=sys.stderr)
        return 1
    ms.sort()
    print("onnxruntime %s, %d intra-op threads" % (ort.__version__, args.threads))
    print("latency over %d runs (%d threads): p50 %.3f ms, p90 %.3f ms, p99 %.3f ms" % (
        args.runs, args.threads, percentile(ms, 50), percentile(ms, 90), percentile(ms, 99)))
    for name, value in zip(names, outputs):
        a = value.numpy()
        print("output %s: %s %s" % (name, a.dtype, list(a.shape)))
        if args.output_dir:
            os.makedirs(args.output_dir, exist_ok=True)
            np.save(output_file(args.output_dir, name), a)
    if args.profile:
        summarize_profile(sess.end_profiling(), args.runs + args.warmup)
    return 0


if __name__ == "__main__":
    sys.exit(main())
