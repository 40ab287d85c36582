#!/usr/bin/python3
"""Triton's perf_analyzer against inferd, over gRPC and HTTP, beside inferd's own loadtest.

Starts inferd on free loopback ports with a Triton-layout repository (<model>/config.pbtxt,
<model>/1/model.onnx) made from the generated example models, then for each model and
concurrency runs, one after another (engines alternated, same machine, same server):
  - perf_analyzer -i grpc   (Triton's tool, unchanged: ModelMetadata, ModelConfig, ModelInfer)
  - perf_analyzer -i http   (the same over the HTTP/REST front end, binary tensor data)
  - loadtest                (inferd's gRPC load generator, closed loop)
and prints a Markdown table of throughput and latency percentiles. perf_analyzer is the one
in tritonclient's wheel (deploy/requirements-test.txt), from /opt/inferd/venv.

  loadtest/triton_perf.py [--models mlp,cnn] [--concurrency 1,4] [--seconds 3] [--out DIR]

Run loadtest/triton_perf.sh (it builds what this needs). Exit status 1 when a tool failed.
"""

import argparse
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
VENV = "/opt/inferd/venv"
CUDART = os.path.join(VENV, "lib/python3.11/site-packages/nvidia/cuda_runtime/lib")


def log(msg):
    print("[triton_perf] " + msg, file=sys.stderr, flush=True)


def wait_for_file(path, proc, what, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %d before it was ready" % (what, proc.returncode))
        time.sleep(0.05)
    raise RuntimeError("%s not ready after %d s" % (what, timeout))


def make_repository(repo, models, bin_dir):
    """A Triton repository: <m>/config.pbtxt naming the platform, <m>/1/model.onnx."""
    for m in models:
        src = os.path.join(bin_dir, "tools", "models", m, "model.onnx")
        if not os.path.exists(src):
            raise RuntimeError("missing %s: bazel build //tools/models:%s" % (src, m))
        os.makedirs(os.path.join(repo, m, "1"))
        os.symlink(src, os.path.join(repo, m, "1", "model.onnx"))
        with open(os.path.join(repo, m, "config.pbtxt"), "w") as f:
            f.write('name: "%s"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 0\n' % m)


class Inferd:
    def __init__(self, bin_dir, out, models):
        self.dir = os.path.join(out, "inferd")
        shutil.rmtree(self.dir, ignore_errors=True)
        repo = os.path.join(self.dir, "models")
        make_repository(repo, models, bin_dir)
        config = os.path.join(self.dir, "inferd.yaml")
        with open(config, "w") as f:
            f.write("server:\n  http_address: 127.0.0.1:0\n  grpc_address: 127.0.0.1:0\n"
                    "  metrics_address: 127.0.0.1:0\n  admin_address: 127.0.0.1:0\n"
                    "  model_repository: models\n  log_level: warn\n")
        grpc_file = os.path.join(self.dir, "grpc.port")
        http_file = os.path.join(self.dir, "http.port")
        self.log_path = os.path.join(self.dir, "inferd.log")
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir, "server", "inferd"), "--config", config, "--port-file",
             grpc_file, "--http-port-file", http_file],
            stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT)
        wait_for_file(grpc_file, self.proc, "inferd (%s)" % self.log_path)
        wait_for_file(http_file, self.proc, "inferd (%s)" % self.log_path)
        with open(grpc_file) as f:
            self.grpc = "127.0.0.1:%d" % int(f.read())
        with open(http_file) as f:
            self.http = "127.0.0.1:%d" % int(f.read())
        log("inferd: gRPC %s, HTTP %s, pid %d" % (self.grpc, self.http, self.proc.pid))

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def perf_analyzer(out, name, protocol, url, model, concurrency, seconds):
    """One perf_analyzer run; returns {rps, p50, p90, p99} (us) or raises."""
    csv_path = os.path.join(out, "%s.csv" % name)
    log_path = os.path.join(out, "%s.log" % name)
    cmd = [os.path.join(VENV, "bin", "perf_analyzer"), "-m", model, "-i", protocol, "-u", url,
           "--concurrency-range", "%d:%d" % (concurrency, concurrency),
           "--measurement-interval", str(seconds * 1000), "--stability-percentage", "50",
           "--max-trials", "4", "-f", csv_path]
    env = dict(os.environ, LD_LIBRARY_PATH=CUDART)
    with open(log_path, "w") as lf:
        lf.write(" ".join(cmd) + "\n")
        lf.flush()
        rc = subprocess.call(cmd, stdout=lf, stderr=subprocess.STDOUT, env=env,
                             timeout=30 * seconds + 60)
    if rc != 0 or not os.path.exists(csv_path):
        raise RuntimeError("perf_analyzer %s exited %d: see %s" % (name, rc, log_path))
    with open(csv_path) as f:
        row = next(csv.DictReader(f))
    return {"rps": float(row["Inferences/Second"]), "p50": float(row["p50 latency"]),
            "p90": float(row["p90 latency"]), "p99": float(row["p99 latency"]), "log": log_path}


def loadtest(bin_dir, out, name, target, model, concurrency, seconds):
    json_path = os.path.join(out, "%s.json" % name)
    log_path = os.path.join(out, "%s.log" % name)
    cmd = [os.path.join(bin_dir, "loadtest", "loadtest"), "--target", target, "--model", model,
           "--concurrency", str(concurrency), "--duration", "%ds" % seconds, "--warmup", "50",
           "--json", json_path]
    with open(log_path, "w") as lf:
        lf.write(" ".join(cmd) + "\n")
        lf.flush()
        rc = subprocess.call(cmd, stdout=lf, stderr=subprocess.STDOUT, timeout=10 * seconds + 60)
    if rc != 0 or not os.path.exists(json_path):
        raise RuntimeError("loadtest %s exited %d: see %s" % (name, rc, log_path))
    with open(json_path) as f:
        m = json.load(f)["measured"]
    lat = m["latency_us"]
    return {"rps": m["throughput_rps"], "p50": lat["p50"], "p90": lat["p90"], "p99": lat["p99"],
            "log": log_path}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default="mlp,cnn")
    p.add_argument("--concurrency", default="1,4")
    p.add_argument("--seconds", type=int, default=3)
    p.add_argument("--out", default="")
    args = p.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="inferd_triton_perf_")
    os.makedirs(out, exist_ok=True)
    bin_dir = os.path.realpath(os.path.join(ROOT, "bazel-bin"))
    models = args.models.split(",")
    server = Inferd(bin_dir, out, models)
    rows, failed = [], False
    try:
        for model in models:
            for c in [int(x) for x in args.concurrency.split(",")]:
                runs = [("perf_analyzer gRPC", lambda n: perf_analyzer(
                            out, n, "grpc", server.grpc, model, c, args.seconds)),
                        ("perf_analyzer HTTP", lambda n: perf_analyzer(
                            out, n, "http", server.http, model, c, args.seconds)),
                        ("inferd loadtest gRPC", lambda n: loadtest(
                            bin_dir, out, n, server.grpc, model, c, args.seconds))]
                for tool, run in runs:
                    name = "%s_c%d_%s" % (model, c, tool.split()[-1].lower() +
                                          ("_pa" if tool.startswith("perf") else "_lt"))
                    try:
                        r = run(name)
                        rows.append((model, c, tool, "%.0f" % r["rps"], "%.0f" % r["p50"],
                                     "%.0f" % r["p90"], "%.0f" % r["p99"]))
                    except Exception as e:  # report every failure, keep measuring the rest
                        failed = True
                        log("FAILED: %s" % e)
                        rows.append((model, c, tool, "failed", "", "", ""))
    finally:
        server.stop()
    print("| model | concurrency | client | infer/s | p50 us | p90 us | p99 us |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")
    print("\nlogs and raw reports: %s" % out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
