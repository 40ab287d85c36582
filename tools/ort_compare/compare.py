#!/opt/inferd/venv/bin/python
"""Runs each generated model in inferd (`inferctl run`) and in ONNX Runtime (ort_bench.py, the
`onnxruntime` wheel of the test venv) on the same inputs and thread count, alternating the two for
a few rounds, and prints a table of median latencies, their ratio and each engine's peak resident
memory. Called by run.sh, which builds what it needs. The engines are run by engines.py, as
tools/model_zoo/check.py runs them.

Each round runs W warm-up then N timed runs in each engine (a fresh process each) and takes
their median (p50); the table shows, per engine, the lowest round median (the round least
disturbed by other load on the machine) and the spread of round medians.
"""

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import engines  # noqa: E402
import pb_to_npy  # noqa: E402


def measure(result, what):
    if not result.ok:
        sys.exit("%s failed: %s\n%s" % (what, result.error, result.stdout[-2000:]))
    return result.p50_ms, result.peak_rss_mib


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--inferctl", required=True)
    p.add_argument("--models-dir", required=True, help="bazel-bin/tools/models")
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
    load_before = os.getloadavg()[0]
    rows = []
    for model in args.models.split():
        model_dir = os.path.join(args.models_dir, model)
        onnx_path = os.path.join(model_dir, "model.onnx")
        feeds = pb_to_npy.convert(model_dir, os.path.join(args.work, model))
        for threads in [int(t) for t in args.threads.split()]:
            common = dict(threads=threads, runs=args.runs, warmup=args.warmup)
            inferd, ort, rss = [], [], [0.0, 0.0]
            for k in range(args.rounds):
                order = ("inferd", "ort") if k % 2 == 0 else ("ort", "inferd")
                for engine in order:
                    if engine == "inferd":
                        ms, mib = measure(engines.run_inferd(args.inferctl, onnx_path, feeds,
                                                             **common), "inferctl run")
                        inferd.append(ms)
                        rss[0] = max(rss[0], mib)
                    else:
                        ms, mib = measure(engines.run_ort(onnx_path, feeds, **common),
                                          "ort_bench.py")
                        ort.append(ms)
                        rss[1] = max(rss[1], mib)
            rows.append((model, threads, inferd, ort, rss))
            print("  %-18s threads %d: inferd %s ms, ORT %s ms" % (
                model, threads, " ".join("%.3f" % v for v in inferd),
                " ".join("%.3f" % v for v in ort)), file=sys.stderr)

    print("| model | threads | inferd p50 (ms) | ORT p50 (ms) | inferd / ORT | "
          "peak RSS MiB inferd / ORT |")
    print("|---|---:|---:|---:|---:|---:|")
    worst = 0.0
    for model, threads, inferd, ort, rss in rows:
        a, b = min(inferd), min(ort)
        worst = max(worst, a / b)
        print("| %s | %d | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %.2f | %.0f / %.0f |" % (
            model, threads, a, min(inferd), max(inferd), b, min(ort), max(ort), a / b, rss[0],
            rss[1]))
    print("\nworst ratio %.2f (target: <= 1.50); %d rounds of %d runs after %d warm-up runs; "
          "(low-high) is the spread of round medians%s" % (
              worst, args.rounds, args.runs, args.warmup,
              "; %d busy processes alongside" % args.busy if args.busy else ""))
    print("ONNX Runtime %s (PyPI, %s); its peak RSS includes the Python harness, %.0f MiB "
          "with nothing loaded" % (engines.ort_version(), engines.ORT_PYTHON,
                                   engines.ort_baseline_rss_mib()))
    load_after = os.getloadavg()[0]
    print("load average %.2f before, %.2f after, on %d CPUs" % (load_before, load_after,
                                                                os.cpu_count()))
    if not args.busy and max(load_before, load_after) > 0.5 * os.cpu_count():
        print("warning: other processes were using the CPUs; multi-thread figures (and to a "
              "lesser degree single-thread ones) are unreliable")


if __name__ == "__main__":
    main()
