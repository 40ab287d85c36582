#!/usr/bin/python3
"""Runs each model in inferd (`inferctl run`) and in ONNX Runtime (ort_bench.js) on the same
inputs and thread count, alternating the two for a few rounds, and prints a table of median
latencies and the ratio inferd / ORT. Called by run.sh, which builds and installs what it needs.

Each round runs W warm-up then N timed runs in each engine and takes their median (p50); the
table shows, per engine, the lowest round median (the round least disturbed by other load on the
machine) and the spread of round medians.
"""

import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
P50 = re.compile(r"p50 ([0-9.]+) ms")


def run(cmd, env=None):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env)
    if proc.returncode != 0:
        sys.exit("command failed (%d): %s\n%s" % (proc.returncode, " ".join(cmd), proc.stdout))
    match = P50.search(proc.stdout)
    if not match:
        sys.exit("no 'p50 X ms' in the output of: %s\n%s" % (" ".join(cmd), proc.stdout))
    return float(match.group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--inferctl", required=True)
    p.add_argument("--models-dir", required=True, help="bazel-bin/tools/models")
    p.add_argument("--ort-modules", required=True, help="node_modules holding onnxruntime-node")
    p.add_argument("--work", required=True, help="scratch dir for the .npy inputs")
    p.add_argument("--models", default="cnn cnn_b8 transformer transformer_large")
    p.add_argument("--threads", default="1 2")
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--busy", type=int, default=0,
                   help="CPU-bound processes to run alongside (to see behaviour under contention)")
    args = p.parse_args()
    busy = [subprocess.Popen(["/bin/sh", "-c", "while :; do :; done"]) for _ in range(args.busy)]
    try:
        compare(args)
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()


def compare(args):
    env = dict(os.environ, ORT_NODE_MODULES=args.ort_modules)
    load_before = os.getloadavg()[0]
    rows = []
    for model in args.models.split():
        model_dir = os.path.join(args.models_dir, model)
        onnx_path = os.path.join(model_dir, "model.onnx")
        inputs = subprocess.run(
            ["/usr/bin/python3", os.path.join(HERE, "pb_to_npy.py"), model_dir,
             os.path.join(args.work, model)],
            check=True, stdout=subprocess.PIPE, text=True).stdout.split()
        for threads in [int(t) for t in args.threads.split()]:
            common = ["--runs", str(args.runs), "--warmup", str(args.warmup), "--threads",
                      str(threads)]
            feeds = [a for spec in inputs for a in ("--input", spec)]
            inferd, ort = [], []
            for _ in range(args.rounds):
                inferd.append(run([args.inferctl, "run", onnx_path] + feeds + common))
                ort.append(run(["node", os.path.join(HERE, "ort_bench.js"), "--model", onnx_path]
                               + feeds + common, env=env))
            rows.append((model, threads, inferd, ort))
            print("  %-18s threads %d: inferd %s ms, ORT %s ms" % (
                model, threads, " ".join("%.3f" % v for v in inferd),
                " ".join("%.3f" % v for v in ort)), file=sys.stderr)

    print("| model | threads | inferd p50 (ms) | ORT p50 (ms) | inferd / ORT |")
    print("|---|---:|---:|---:|---:|")
    worst = 0.0
    for model, threads, inferd, ort in rows:
        a, b = min(inferd), min(ort)
        worst = max(worst, a / b)
        print("| %s | %d | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %.2f |" % (
            model, threads, a, min(inferd), max(inferd), b, min(ort), max(ort), a / b))
    print("\nworst ratio %.2f (target: <= 1.50); %d rounds of %d runs after %d warm-up runs; "
          "(low-high) is the spread of round medians%s" % (
              worst, args.rounds, args.runs, args.warmup,
              "; %d busy processes alongside" % args.busy if args.busy else ""))
    load_after = os.getloadavg()[0]
    print("load average %.2f before, %.2f after, on %d CPUs" % (load_before, load_after,
                                                                os.cpu_count()))
    if not args.busy and max(load_before, load_after) > 0.5 * os.cpu_count():
        print("warning: other processes were using the CPUs; multi-thread figures (and to a "
              "lesser degree single-thread ones) are unreliable")


if __name__ == "__main__":
    main()
