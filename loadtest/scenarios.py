#!/usr/bin/python3
"""inferd load scenarios: start servers on free loopback ports, load them with loadtest, write a
Markdown report. Run through loadtest/scenarios.sh (which builds the binaries first).

    scenarios.py transport|memory|engine|soak|unload|all [--quick] [--out DIR]
                 [--soak-duration S] [--unload-cycles N]

Scenarios (loadtest/README.md explains every figure):
  transport  inferd serving an Identity model vs echo_server (zero-copy and copy variants),
             payloads 16 B, 64 KiB, 4 MiB, 64 MiB, concurrency 1 and 16.
  memory     the arena scenarios of docs/arenas.md over the network, read from the admin API and
             /proc/<pid>: responses consumed at once, responses in flight (slow readers), large
             intermediates with a small output, alternating shapes, one large request then Trim.
  engine     tools/ort_compare/run.sh (engine vs ONNX Runtime), when it exists.
  soak       several models, mixed sizes, concurrency 32, admin trims and cap changes every 2 s;
             zero errors, every response verified, VmRSS bounded by caps + live data + transport.
  unload     500 RepositoryModelLoad/Unload cycles of a model with 32 MiB of weights while
             identity and mlp_dynamic serve under load: VmRSS after the cycles within 5 MiB of
             VmRSS after the first 20 (warm-up), zero failed requests.

Every process this script starts is stopped by it (SIGTERM, then SIGKILL by pid); every load run
is bounded by a request count and a duration.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KIB = 1024
MIB = 1024 * 1024

STARTED = []  # Popen objects we started, stopped at exit


# --- small helpers ----------------------------------------------------------------------------

def log(msg):
    print("[scenarios %s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def fmt_bytes(n):
    if n is None:
        return "-"
    if n >= MIB:
        return "%.1f MiB" % (n / MIB)
    if n >= KIB:
        return "%.1f KiB" % (n / KIB)
    return "%d B" % n


def fmt_us(us):
    if us is None:
        return "-"
    if us >= 10000:
        return "%.1f ms" % (us / 1000)
    if us >= 1000:
        return "%.2f ms" % (us / 1000)
    return "%.0f us" % us


def fmt_ratio(a, b):
    if not a or not b:
        return "-"
    return "%.2f" % (a / b)


def table(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def read_rss(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def stop(proc, timeout=20):
    """SIGTERM, wait, then SIGKILL: only the process we started, by its pid."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    if proc in STARTED:
        STARTED.remove(proc)


def wait_for_file(path, proc, what, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %s before it was ready" % (what, proc.returncode))
        time.sleep(0.05)
    raise RuntimeError("%s not ready in %d s" % (what, timeout))


class Env:
    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.out = args.out
        self.bin = os.path.realpath(os.path.join(ROOT, "bazel-bin"))
        self.loadtest = os.path.join(self.bin, "loadtest", "loadtest")
        self.echo = os.path.join(self.bin, "loadtest", "echo_server")
        self.inferd = os.path.join(self.bin, "server", "inferd")
        self.inferctl = os.path.join(self.bin, "tools", "inferctl", "inferctl")
        self.models = os.path.join(self.bin, "tools", "models")
        for b in (self.loadtest, self.echo, self.inferd):
            if not os.access(b, os.X_OK):
                raise RuntimeError("missing %s: run loadtest/scenarios.sh (it builds)" % b)
        self.counter = 0

    def path(self, name):
        return os.path.join(self.out, name)

    def model_dir(self, name):
        d = os.path.join(self.models, name)
        if not os.path.exists(os.path.join(d, "model.onnx")):
            raise RuntimeError("missing model %s: bazel build //tools/models:%s" % (d, name))
        return d


class Inferd:
    """inferd on free loopback ports with a repository of symlinks to generated models."""

    def __init__(self, env, name, models, models_yaml, server_yaml="", extra_dirs=None):
        self.dir = env.path("inferd_" + name)
        shutil.rmtree(self.dir, ignore_errors=True)
        repo = os.path.join(self.dir, "models")
        os.makedirs(repo)
        for m in models:
            os.symlink(env.model_dir(m), os.path.join(repo, m))
        for m, d in (extra_dirs or {}).items():  # name -> model directory outside bazel-bin
            os.symlink(d, os.path.join(repo, m))
        config = os.path.join(self.dir, "inferd.yaml")
        with open(config, "w") as f:
            f.write("server:\n  http_address: 127.0.0.1:0\n  grpc_address: 127.0.0.1:0\n"
                    "  admin_address: 127.0.0.1:0\n"
                    "  metrics_address: 127.0.0.1:0\n  model_repository: models\n"
                    "  max_message_bytes: 256MiB\n  log_level: warn\n" + server_yaml)
            f.write("models:\n" + models_yaml)
        port_file = os.path.join(self.dir, "port")
        self.log_path = os.path.join(self.dir, "inferd.log")
        self.proc = subprocess.Popen(
            [env.inferd, "--config", config, "--port-file", port_file, "--log-level", "info"],
            stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT)
        STARTED.append(self.proc)
        wait_for_file(port_file, self.proc, "inferd (%s)" % self.log_path)
        with open(port_file) as f:
            self.address = "127.0.0.1:%d" % int(f.read())
        m = None
        with open(self.log_path) as f:
            m = re.search(r"admin API listening on \S+ \(port (\d+)\)", f.read())
        if not m:
            raise RuntimeError("inferd did not log its admin port: see " + self.log_path)
        self.admin = "127.0.0.1:%s" % m.group(1)
        self.pid = self.proc.pid
        log("inferd %s: %s, admin %s, pid %d" % (name, self.address, self.admin, self.pid))

    def stop(self):
        stop(self.proc)


class Echo:
    def __init__(self, env, mode):
        port_file = env.path("echo_%s.port" % mode)
        if os.path.exists(port_file):
            os.remove(port_file)
        self.proc = subprocess.Popen(
            [env.echo, "--mode", mode, "--address", "127.0.0.1:0", "--port-file", port_file,
             "--max-lifetime", "3600s"],
            stdout=subprocess.DEVNULL, stderr=open(env.path("echo_%s.log" % mode), "w"))
        STARTED.append(self.proc)
        wait_for_file(port_file, self.proc, "echo_server --mode " + mode)
        with open(port_file) as f:
            self.address = "127.0.0.1:%d" % int(f.read())
        self.pid = self.proc.pid

    def stop(self):
        stop(self.proc)


def loadtest(env, name, args, timeout=900, check=True):
    """Runs loadtest with --json; returns the report (dict)."""
    env.counter += 1
    json_path = env.path("%02d_%s.json" % (env.counter, name))
    log_path = json_path[:-5] + ".log"
    cmd = [env.loadtest] + args + ["--json", json_path]
    with open(log_path, "w") as lf:
        lf.write(" ".join(cmd) + "\n")
        lf.flush()
        rc = subprocess.call(cmd, stdout=lf, stderr=subprocess.STDOUT, timeout=timeout)
    if not os.path.exists(json_path):
        raise RuntimeError("loadtest %s wrote no report (exit %d): see %s" % (name, rc, log_path))
    with open(json_path) as f:
        r = json.load(f)
    r["_log"] = log_path
    r["_rc"] = rc
    if check and rc != 0:
        log("WARNING: loadtest %s exited %d (see %s)" % (name, rc, log_path))
    return r


def admin_cmd(env, verb, admin, extra=()):
    out = subprocess.check_output([env.loadtest, "admin", verb, "--admin", admin] + list(extra),
                                  timeout=60)
    return json.loads(out)


# --- 1. transport ------------------------------------------------------------------------------

PAYLOADS = [("16 B", 16), ("64 KiB", 64 * KIB), ("4 MiB", 4 * MIB), ("64 MiB", 64 * MIB)]


def warmup_for(size, c):
    if size >= 64 * MIB:
        return max(2, c)
    if size >= 4 * MIB:
        return max(10, 2 * c)
    return 200


def bounds_for(env, size, c):
    """(requests, duration) of one run: small payloads run for a time, large ones for a count
    (the same for every server, so the drain of the last calls weighs the same)."""
    if size >= 64 * MIB:
        return (8 if c == 1 else 32) if env.quick else (12 if c == 1 else 48), "120s"
    if size >= 4 * MIB:
        return (60 if c == 1 else 120) if env.quick else (100 if c == 1 else 200), "60s"
    return 1000000, "1s" if env.quick else "2s"


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def transport(env):
    rounds = 1 if env.quick else 3
    servers = {}
    runs = {}  # (size, c, server) -> [measured, ...], one per round
    try:
        servers["echo zero-copy"] = Echo(env, "zerocopy")
        servers["echo copy"] = Echo(env, "copy")
        servers["inferd identity"] = Inferd(
            env, "transport", ["identity"],
            "  - name: identity\n    max_concurrent_runs: 2\n    queue_length: 64\n")
        names = list(servers)
        for rnd in range(rounds):
            for label, size in PAYLOADS:
                for c in (1, 16):
                    # Back to back, in an order that rotates with the round (no server always
                    # runs first, after the 64 MiB runs, ...).
                    for sname in names[rnd % 3:] + names[:rnd % 3]:
                        srv = servers[sname]
                        model = "identity" if sname.startswith("inferd") else "echo"
                        requests, duration = bounds_for(env, size, c)
                        r = loadtest(env, "transport_%s_%d_%s_r%d" % (
                            size, c, sname.replace(" ", "_"), rnd), [
                            "--target", srv.address, "--model", model,
                            "--shape", "x:%d" % (size // 4), "--verify", "echo",
                            "--concurrency", str(c), "--requests", str(requests),
                            "--duration", duration, "--warmup", str(warmup_for(size, c)),
                            "--warmup-duration", "20s", "--timeout", "120s",
                            "--server-pid", str(srv.pid), "--quiet"])
                        m = r["measured"]
                        m["server_cores"] = (r["server"].get("cpu_s_steady", 0) / m["wall_s"]
                                             if m["wall_s"] else 0)
                        runs.setdefault((size, c, sname), []).append(m)
                        log("transport round %d %s c=%d %s: %.1f req/s p50 %s p99 %s" % (
                            rnd + 1, label, c, sname, m["throughput_rps"],
                            fmt_us(m["latency_us"]["p50"]), fmt_us(m["latency_us"]["p99"])))
    finally:
        for srv in servers.values():
            srv.stop()

    def med(size, c, sname, key):
        ms = runs[(size, c, sname)]
        if key in ("p50", "p99", "p99_9"):
            return median([m["latency_us"][key] for m in ms])
        return median([m[key] for m in ms])

    rows, ratio_rows = [], []
    for label, size in PAYLOADS:
        for c in (1, 16):
            for sname in servers:
                ms = runs[(size, c, sname)]
                tp = [m["throughput_rps"] for m in ms]
                rows.append([
                    label, c, sname, sum(m["ok"] for m in ms), sum(m["failed"] for m in ms),
                    "%.1f" % median(tp) + (" (%.0f-%.0f)" % (min(tp), max(tp)) if rounds > 1
                                           else ""),
                    "%.1f" % med(size, c, sname, "response_mib_per_s"),
                    fmt_us(med(size, c, sname, "p50")), fmt_us(med(size, c, sname, "p99")),
                    fmt_us(med(size, c, sname, "p99_9")),
                    "%.2f" % med(size, c, sname, "client_cpu_cores"),
                    "%.2f" % med(size, c, sname, "server_cores")])
            for base in ("echo zero-copy", "echo copy"):
                ratio_rows.append([
                    label, c, "inferd / " + base,
                    fmt_ratio(med(size, c, "inferd identity", "throughput_rps"),
                              med(size, c, base, "throughput_rps")),
                    fmt_ratio(med(size, c, "inferd identity", "p50"), med(size, c, base, "p50")),
                    fmt_ratio(med(size, c, "inferd identity", "p99"), med(size, c, base, "p99"))])
    errors = sum(m["failed"] for ms in runs.values() for m in ms)
    md = ["## 1. Transport overhead: inferd (Identity model) vs echo_server", "",
          "Closed loop, one connection, each response verified against its request "
          "(`--verify echo`). Each run: a warm-up, then %s (16 B, 64 KiB), or a fixed count "
          "of requests (4 MiB: %d / %d at C=1 / 16; 64 MiB: %d / %d), the same for every "
          "server; %d round(s), the three servers back to back in a rotating order, and each "
          "figure below is the median over the rounds (req/s also shows the range). "
          "Throughput is verified responses per second from the first send to the last "
          "response; MiB/s counts the response bytes; client and server cores are CPU seconds "
          "per wall second during the measured part (2 cores in all). Errors in all runs: %d."
          % ((bounds_for(env, 16, 1)[1],) + tuple(bounds_for(env, sz, c)[0]
                                                  for sz in (4 * MIB, 64 * MIB) for c in (1, 16))
             + (rounds, errors)), "",
          table(["payload", "C", "server", "ok", "failed", "req/s", "MiB/s", "p50", "p99",
                 "p99.9", "client cores", "server cores"], rows), "",
          "Ratios of the medians (throughput: higher is better, 1.00 = as fast as the echo; "
          "latency: lower is better, 1.00 = no added latency):", "",
          table(["payload", "C", "ratio", "throughput", "p50", "p99"], ratio_rows), ""]
    return "\n".join(md)


# --- 2. memory ---------------------------------------------------------------------------------

def memory(env):
    q = env.quick
    srv = Inferd(env, "memory", ["wide_output", "wide_bottleneck", "mlp_dynamic"],
                 "  - name: wide_output\n  - name: wide_bottleneck\n  - name: mlp_dynamic\n")
    common = ["--target", srv.address, "--admin", srv.admin, "--server-pid", str(srv.pid),
              "--reset-peak", "--duration", "60s", "--warmup-duration", "60s", "--quiet"]
    wide_output_shapes = ["x:2048,1", "y:1,256"]
    # (name, what, model, load args, input shapes for the echo baseline when fixed)
    runs = [
        ("responses consumed at once", "wide_output (8 MiB output), C=1", "wide_output",
         ["--concurrency", "1", "--warmup", "20", "--requests", "60" if q else "200"],
         wide_output_shapes),
        ("many responses in flight (slow readers)",
         "wide_output, C=16, client reads each response 20 ms late", "wide_output",
         ["--concurrency", "16", "--slow-read-ms", "20", "--warmup", "64",
          "--requests", "100" if q else "400", "--sample-ms", "20"], wide_output_shapes),
        ("large intermediates, small output", "wide_bottleneck (16 MiB intermediates), C=1",
         "wide_bottleneck",
         ["--concurrency", "1", "--warmup", "10", "--requests", "60" if q else "200"],
         ["x:1024,1", "y:1,4096"]),
        ("alternating input shapes",
         "mlp_dynamic, x [8, 64], [512, 64], [4096, 64] in turn, C=1", "mlp_dynamic",
         ["--concurrency", "1", "--shape", "x:8,64", "--shape", "x:512,64",
          "--shape", "x:4096,64", "--warmup", "30", "--requests", "150" if q else "600"], []),
    ]
    rows, reports = [], []
    echo = None
    try:
        for name, what, model, args, shapes in runs:
            r = loadtest(env, "memory_" + name.split()[0], common + ["--model", model] + args)
            reports.append((name, what, r))
        # One large request, then Trim.
        big = loadtest(env, "memory_trim", common + [
            "--model", "mlp_dynamic", "--concurrency", "1", "--shape", "x:65536,64",
            "--warmup", "1", "--requests", "3", "--trim-after"])
        srv.stop()
        # The same requests against echo_server: the page faults of gRPC alone.
        echo = Echo(env, "zerocopy")
        echo_faults = []
        for name, what, model, args, shapes in runs:
            shape_args = [a for sh in shapes for a in ("--shape", sh)]
            r = loadtest(env, "memory_echo_" + name.split()[0], [
                "--target", echo.address, "--server-pid", str(echo.pid), "--model", "echo",
                "--no-metadata", "--verify", "echo", "--duration", "60s",
                "--warmup-duration", "60s", "--quiet"] + shape_args + args)
            f = r["server"].get("minor_faults_steady")
            echo_faults.append(f / r["measured"]["ok"] if f is not None and r["measured"]["ok"]
                               else None)
        # One large request, then Trim.
    finally:
        srv.stop()
        if echo:
            echo.stop()

    for (name, what, r), echo_fpr in zip(reports, echo_faults):
        s, m = r["server"], r["measured"]
        by_arena = {"execution": [0, 0], "io": [0, 0]}
        for a in s.get("arenas_steady", []):
            by_arena[a["arena"]][0] += a["system_allocations"]
            by_arena[a["arena"]][1] += a["system_frees"]
        (ex_allocs, ex_frees), (io_allocs, io_frees) = by_arena["execution"], by_arena["io"]
        faults = s.get("minor_faults_steady")
        leases = s.get("sampled", {}).get("outstanding_leases_max", 0)
        if ex_allocs == ex_frees == io_allocs == io_frees == 0:
            verdict = "0 as expected"
        elif ex_allocs == ex_frees == io_frees == 0 and io_allocs <= max(leases, 1):
            # The seed allows it: an output of an older run still held (here: a response gRPC
            # had not finished sending) needs one more IO buffer; it is retained after.
            verdict = ("execution 0; io +%d new buffers <= responses in flight (%d), nothing "
                       "freed" % (io_allocs, leases))
        else:
            verdict = "**not 0**"
        rows.append([name, what, m["ok"], m["failed"],
                     "%d / %d" % (ex_allocs, io_allocs), "%d / %d" % (ex_frees, io_frees),
                     faults,
                     "%.2f" % (faults / m["ok"]) if faults is not None and m["ok"] else "-",
                     "%.2f" % echo_fpr if echo_fpr is not None else "-",
                     fmt_bytes(s.get("arenas_after", {}).get("peak_live_bytes")),
                     fmt_bytes(s.get("arenas_after", {}).get("retained_bytes")),
                     s.get("sampled", {}).get("outstanding_leases_max", "-"),
                     fmt_us(m["latency_us"]["p50"]), fmt_us(m["latency_us"]["p99"]), verdict])
    s = big["server"]
    before, after = s.get("arenas_after", {}), s.get("arenas_after_trim", {})
    trim_rows = [[
        "mlp_dynamic, x [65536, 64] (16 MiB input), 1 warm-up + %d requests" % big["measured"]["ok"],
        fmt_bytes(before.get("peak_live_bytes")), fmt_bytes(before.get("retained_bytes")),
        fmt_bytes(s.get("trim_released_bytes")), fmt_bytes(after.get("retained_bytes")),
        (after.get("system_frees", 0) - before.get("system_frees", 0)) if after else "-",
        fmt_bytes(s.get("proc_after", {}).get("rss_bytes")),
        fmt_bytes(s.get("proc_after_trim", {}).get("rss_bytes"))]]
    md = ["## 2. Memory scenarios over the network (buffer-reuse seed)", "",
          "One inferd, default (unbounded) retention caps. Each run: warm-up with the same "
          "shapes, then ResetPeak, a snapshot of the model's arenas (admin GetMemoryStats, both "
          "arenas summed) and of /proc/<pid>/stat, the steady part, and the same snapshot again. "
          "System allocations and frees are the arenas' counters (expected 0 in the steady part); "
          "minor faults are the whole server process's (gRPC's receive buffers included); "
          "the echo_server column is the same requests (same shapes, concurrency and counts) "
          "sent to echo_server --mode zerocopy: the faults gRPC takes by itself. "
          "Peak live and retained are read after the steady part; leases in flight is the most "
          "IO-arena buffers pinned by responses still being sent, sampled during it.", "",
          table(["scenario", "model and load", "steady requests", "failed",
                 "system allocs (execution / io)", "system frees (execution / io)",
                 "minor faults", "faults / request",
                 "echo_server faults / request", "peak live", "retained",
                 "leases in flight (max)", "p50", "p99", "steady state"], rows), "",
          "One large request, then an admin Trim:", "",
          table(["load", "peak live", "retained before Trim", "released by Trim",
                 "retained after", "system frees by Trim", "VmRSS before", "VmRSS after"],
                trim_rows), ""]
    return "\n".join(md)


# --- 3. engine vs ONNX Runtime -----------------------------------------------------------------

def engine(env):
    script = os.path.join(ROOT, "tools", "ort_compare", "run.sh")
    md = ["## 3. Engine vs ONNX Runtime", ""]
    if not os.access(script, os.X_OK):
        md += ["`tools/ort_compare/run.sh` is not there yet (the kernel issue's comparison "
               "script); rerun `loadtest/scenarios.sh engine` once it is.", ""]
        return "\n".join(md)
    extra = os.environ.get("ORT_COMPARE_ARGS", "").split()
    log("engine: %s %s" % (script, " ".join(extra)))
    try:
        p = subprocess.run([script] + extra, cwd=ROOT, capture_output=True, text=True,
                           timeout=int(os.environ.get("ORT_COMPARE_TIMEOUT", "600")))
        with open(env.path("ort_compare.log"), "w") as f:
            f.write(p.stdout + "\n--- stderr ---\n" + p.stderr)
        md += ["Output of `tools/ort_compare/run.sh %s` (exit %d):" % (" ".join(extra),
                                                                      p.returncode), "",
               p.stdout.strip(), ""]
        if p.returncode != 0:
            tail = [l for l in p.stderr.splitlines() if not l.startswith(("INFO:", "Loading",
                                                                          "Analyzing", "["))]
            md += ["It failed; the end of its stderr (all of it in `ort_compare.log`):", "",
                   "```", "\n".join(tail[-15:]), "```", ""]
    except subprocess.TimeoutExpired:
        md += ["`tools/ort_compare/run.sh` did not finish in time; see ort_compare.log.", ""]
    return "\n".join(md)


# --- batching ---------------------------------------------------------------------------------

BATCH_MODELS = [("mlp", "mlp_dynamic", "x:1,64"), ("cnn", "cnn_dynamic", "image:1,3,32,32")]
BATCH_CONCURRENCY = [1, 16, 64]


def batching(env):
    """Throughput and latency of batch-1 requests with and without dynamic batching."""
    models_yaml = ""
    for name, model, _ in BATCH_MODELS:
        models_yaml += ("  - {name: %s, path: %s/model.onnx, max_concurrent_runs: 2, "
                        "queue_length: 256}\n" % (name, model))
        models_yaml += ("  - name: %s_batched\n    path: %s/model.onnx\n"
                        "    max_concurrent_runs: 2\n    queue_length: 256\n"
                        "    max_batch_size: 64\n    dynamic_batching: {max_queue_delay: 0us}\n"
                        % (name, model))
    srv = Inferd(env, "batching", [m for _, m, _ in BATCH_MODELS], models_yaml)
    rounds = 1 if env.quick else 3
    duration = "1s" if env.quick else "3s"
    results = {}  # (model, batched, c) -> [reports]
    try:
        for rnd in range(rounds):
            for name, _, shape in BATCH_MODELS:
                for c in BATCH_CONCURRENCY:
                    for batched in (False, True):
                        target = name + ("_batched" if batched else "")
                        r = loadtest(env, "batching_%s_%d_r%d" % (target, c, rnd), [
                            "--target", srv.address, "--model", target, "--shape", shape,
                            "--verify", "first", "--concurrency", str(c),
                            "--connections", str(min(c, 4)), "--warmup", str(max(50, 4 * c)),
                            "--requests", "1000000", "--duration", duration])
                        results.setdefault((name, batched, c), []).append(r)
    finally:
        srv.stop()
    md = ["## Dynamic batching", "",
          "Batch-1 requests (`--shape %s`), closed loop; each model twice in one inferd: "
          "`max_concurrent_runs: 2` alone, and with `max_batch_size: 64, dynamic_batching: "
          "{max_queue_delay: 0us}` (a run takes what queued while the previous ran). Median of "
          "%d round(s) of %s each; every response checked against the first (`--verify first`)."
          % (", ".join(s for _, _, s in BATCH_MODELS), rounds, duration), ""]
    rows = []
    for name, _, _ in BATCH_MODELS:
        for c in BATCH_CONCURRENCY:
            plain = results[(name, False, c)]
            batched = results[(name, True, c)]
            t0 = median([r["measured"]["throughput_rps"] for r in plain])
            t1 = median([r["measured"]["throughput_rps"] for r in batched])
            p0 = median([r["measured"]["latency_us"]["p50"] for r in plain])
            p1 = median([r["measured"]["latency_us"]["p50"] for r in batched])
            errs = sum(r["measured"]["failed"] for r in plain + batched)
            rows.append([name, str(c), "%.0f" % t0, "%.0f" % t1, fmt_ratio(t1, t0),
                         fmt_us(p0), fmt_us(p1), "%+.1f%%" % (100.0 * (p1 - p0) / p0),
                         str(errs)])
    md.append(table(["model", "concurrency", "req/s alone", "req/s batched", "speed-up",
                     "p50 alone", "p50 batched", "p50 change", "errors"], rows))
    md.append("")
    return "\n".join(md)


# --- 4. soak -----------------------------------------------------------------------------------

def soak(env):
    duration = env.args.soak_duration or (20 if env.quick else 180)
    caps = "cpu: {execution: 64MiB, io: 64MiB}"
    models_yaml = "".join("  - name: %s\n    retention_caps:\n      %s\n" % (m, caps)
                          for m in ("identity", "mlp_dynamic", "wide_bottleneck", "wide_output"))
    srv = Inferd(env, "soak", ["identity", "mlp_dynamic", "wide_bottleneck", "wide_output"],
                 models_yaml)
    # Workloads: (name, concurrency, args, largest request bytes, largest response bytes).
    workloads = [
        ("identity", 8, ["--model", "identity", "--shape", "x:4", "--shape", "x:16384",
                         "--shape", "x:262144", "--verify", "echo"], 1 * MIB, 1 * MIB,
         "x: 16 B / 64 KiB / 1 MiB in turn"),
        ("mlp_dynamic", 8, ["--model", "mlp_dynamic", "--shape", "x:1,64", "--shape", "x:64,64",
                            "--shape", "x:1024,64"], 256 * KIB, 40 * KIB * 2,
         "x: [1, 64], [64, 64], [1024, 64] in turn"),
        ("wide_bottleneck", 8, ["--model", "wide_bottleneck"], 20 * KIB, 16 * KIB,
         "fixed (16 MiB intermediates)"),
        ("wide_output", 8, ["--model", "wide_output"], 9 * KIB, 8 * MIB, "fixed (8 MiB output)"),
    ]
    baseline_rss = read_rss(srv.pid)
    procs, results = [], {}
    churn_json = env.path("soak_churn.json")
    try:
        churn = subprocess.Popen(
            [env.loadtest, "admin", "churn", "--admin", srv.admin, "--duration",
             "%ds" % duration, "--interval", "2s", "--caps", "0,1MiB,16MiB,64MiB",
             "--server-pid", str(srv.pid), "--json", churn_json],
            stdout=open(env.path("soak_churn.log"), "w"), stderr=subprocess.STDOUT)
        STARTED.append(churn)
        for name, c, args, _, _, _ in workloads:
            json_path = env.path("soak_%s.json" % name)
            log_path = env.path("soak_%s.log" % name)
            p = subprocess.Popen(
                [env.loadtest, "--target", srv.address, "--concurrency", str(c),
                 "--requests", "100000000", "--duration", "%ds" % duration, "--timeout", "60s",
                 "--max-errors", "100", "--json", json_path, "--quiet"] + args,
                stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
            STARTED.append(p)
            procs.append((name, p, json_path, log_path))
        log("soak: %d s, %d load processes + admin churn" % (duration, len(procs)))
        deadline = time.time() + duration + 180
        for name, p, json_path, log_path in procs + [("churn", churn, churn_json, None)]:
            p.wait(timeout=max(1, deadline - time.time()))
            STARTED.remove(p)
            with open(json_path) as f:
                results[name] = json.load(f)
            results[name]["_rc"] = p.returncode
        trim = admin_cmd(env, "trim", srv.admin)
        time.sleep(0.5)
        rss_after_trim = read_rss(srv.pid)
        alive = srv.proc.poll() is None
    finally:
        for _, p, _, _ in procs:
            stop(p)
        srv.stop()

    rows, total_errors = [], 0
    for name, c, _, _, _, shapes in workloads:
        r = results[name]
        m = r["measured"]
        total_errors += m["failed"] + r["warmup"]["failed"]
        rows.append([name, c, shapes, r["verify"], m["ok"], m["failed"],
                     ", ".join("%s %d" % kv for kv in m["errors"].items()) or "-",
                     "%.1f" % m["throughput_rps"], fmt_us(m["latency_us"]["p50"]),
                     fmt_us(m["latency_us"]["p99"]), fmt_us(m["latency_us"]["max"])])
    ch = results["churn"]
    sv = ch["server"]
    transport_allowance = sum(2 * c * (req + resp) for _, c, _, req, resp, _ in workloads)
    slack = 64 * MIB
    bound = (baseline_rss or 0) + sv["cap_max_bytes"] + sv["live_max_bytes"] + \
        transport_allowance + slack
    rss_ok = sv["rss_max_bytes"] <= bound
    # Tighter, for information: what the arenas actually held instead of what the caps allow.
    tight = (baseline_rss or 0) + sv["live_plus_retained_max_bytes"] + transport_allowance + slack
    # Growth: the largest VmRSS in the first and in the second half of the soak.
    series = [row for row in sv["series"] if row[1]]
    half = len(series) // 2
    rss_first_half = max((row[1] for row in series[:half]), default=None)
    rss_second_half = max((row[1] for row in series[half:]), default=None)
    passed = total_errors == 0 and ch["errors"] == 0 and rss_ok and alive and all(
        results[n]["_rc"] == 0 for n, *_ in workloads)
    md = ["## 4. Soak", "",
          "%d s; 4 models at once, 8 streams each (concurrency 32), every response verified; "
          "an admin client alternates Trim and SetRetentionCap (0, 1 MiB, 16 MiB, 64 MiB, on "
          "every arena) every 2 s. Configured caps: 64 MiB per arena. **%s**: %d failed calls, "
          "%d admin errors, server %s." % (duration, "PASS" if passed else "FAIL",
                                           total_errors, ch["errors"],
                                           "alive" if alive else "DIED"), "",
          table(["model", "C", "inputs", "verify", "ok", "failed", "errors", "req/s", "p50",
                 "p99", "max"], rows), "",
          "Admin churn: %d trims (%s released), %d cap changes (%s evicted)." % (
              ch["trims"], fmt_bytes(ch["trimmed_bytes"]), ch["cap_changes"],
              fmt_bytes(ch["evicted_bytes"])), "",
          table(["server memory", "bytes"], [
              ["VmRSS after load, before traffic (baseline)", fmt_bytes(baseline_rss)],
              ["VmRSS max during the soak (sampled every 250 ms)", fmt_bytes(sv["rss_max_bytes"])],
              ["VmRSS at the end", fmt_bytes(sv["rss_last_bytes"])],
              ["VmRSS after a final Trim", fmt_bytes(rss_after_trim)],
              ["arenas: max live (all models)", fmt_bytes(sv["live_max_bytes"])],
              ["arenas: max retained", fmt_bytes(sv["retained_max_bytes"])],
              ["arenas: max sum of caps in force", fmt_bytes(sv["cap_max_bytes"])],
              ["transport allowance: 2 x C x (largest request + response), per model",
               fmt_bytes(transport_allowance)],
              ["allocator slack", fmt_bytes(slack)],
              ["bound = baseline + caps + live + transport + slack", fmt_bytes(bound)],
              ["max VmRSS within the bound", "yes" if rss_ok else "**NO**"],
              ["for information: baseline + max(live + retained) + transport + slack",
               "%s (max VmRSS %s it)" % (fmt_bytes(tight),
                                         "within" if sv["rss_max_bytes"] <= tight else "above")],
              ["max VmRSS in the first half / in the second half of the soak",
               "%s / %s" % (fmt_bytes(rss_first_half), fmt_bytes(rss_second_half))],
              # (protobuf JSON writes 64-bit integers as strings)
              ["final Trim released", fmt_bytes(int(trim.get("total_released_bytes", 0)))],
          ]), ""]
    return "\n".join(md)


def make_heavy_model(env):
    """weights_32m: W [8192, 1024] fp32, 32 MiB of weights; small inputs and output."""
    heavy = env.path("weights_32m")
    if not os.path.exists(os.path.join(heavy, "model.onnx")):
        subprocess.check_call(["/usr/bin/python3",
                               os.path.join(ROOT, "tools", "models", "gen_wide_bottleneck.py"),
                               "--out", heavy, "--rows", "4", "--cols", "8192",
                               "--features", "1024"], stdout=subprocess.DEVNULL)
    return heavy


def load_unload(env, srv, model, i):
    """One cycle: `inferctl load` then `inferctl unload` of `model`."""
    for verb in ("load", "unload"):
        r = subprocess.run([env.inferctl, verb, "--model", model, "--addr", srv.address],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError("cycle %d: inferctl %s: %s" % (i, verb, r.stderr.strip()))


UNLOAD_WORKLOADS = [
    ("identity", ["--model", "identity", "--shape", "x:16384", "--verify", "echo"]),
    ("mlp_dynamic", ["--model", "mlp_dynamic", "--shape", "x:64,64"]),
]


def unload_soak(env):
    """Load/unload cycles of a 32 MiB-weights model while two models serve; VmRSS before/after."""
    cycles = env.args.unload_cycles or (60 if env.quick else 500)
    warmup, probe = 20, 3
    if not os.access(env.inferctl, os.X_OK):
        raise RuntimeError("missing %s: run loadtest/scenarios.sh (it builds)" % env.inferctl)
    srv = Inferd(env, "unload", ["identity", "mlp_dynamic"],
                 "  - name: identity\n  - name: mlp_dynamic\n",
                 "  model_control: explicit\n  load_all_models: false\n",
                 extra_dirs={"heavy": make_heavy_model(env)})
    procs, results, f = [], {}, {}
    try:
        f["rss_start"] = read_rss(srv.pid)
        t0 = time.time()
        for i in range(probe):
            load_unload(env, srv, "heavy", i)
        # The serving load outlasts the cycles (it ends on its duration), so every VmRSS figure
        # below is taken under the same load.
        duration = int((time.time() - t0) / probe * cycles * 1.5) + 10
        for name, args in UNLOAD_WORKLOADS:
            json_path = env.path("unload_%s.json" % name)
            p = subprocess.Popen(
                [env.loadtest, "--target", srv.address, "--concurrency", "4", "--requests",
                 "100000000", "--duration", "%ds" % duration, "--timeout", "60s",
                 "--max-errors", "100", "--json", json_path, "--quiet"] + args,
                stdout=open(env.path("unload_%s.log" % name), "w"), stderr=subprocess.STDOUT)
            STARTED.append(p)
            procs.append((name, p, json_path))
        log("unload: %d cycles under load for %d s" % (cycles, duration))
        f["rss_max"] = 0
        t1 = time.time()
        for i in range(probe, cycles):
            load_unload(env, srv, "heavy", i)
            f["rss_max"] = max(f["rss_max"], read_rss(srv.pid) or 0)
            if i + 1 == warmup:
                f["rss_warm"] = read_rss(srv.pid)
        f["cycles_s"] = time.time() - t1
        time.sleep(0.5)
        f["rss_end"] = read_rss(srv.pid)
        f["load_left"] = all(p.poll() is None for _, p, _ in procs)
        for name, p, json_path in procs:
            p.wait(timeout=duration + 180)
            STARTED.remove(p)
            with open(json_path) as jf:
                results[name] = json.load(jf)
        f["alive"] = srv.proc.poll() is None
    finally:
        for _, p, _ in procs:
            stop(p)
        srv.stop()
    return unload_report(cycles, warmup, probe, results, f)


def unload_report(cycles, warmup, probe, results, f):
    bound = 5 * MIB
    rows, errors = [], 0
    for name, _ in UNLOAD_WORKLOADS:
        m = results[name]["measured"]
        errors += m["failed"] + results[name]["warmup"]["failed"]
        rows.append([name, 4, m["ok"], m["failed"], "%.1f" % m["throughput_rps"],
                     fmt_us(m["latency_us"]["p50"]), fmt_us(m["latency_us"]["p99"]),
                     fmt_us(m["latency_us"]["max"])])
    growth = (f["rss_end"] or 0) - (f["rss_warm"] or 0)
    passed = f["alive"] and errors == 0 and f["rss_end"] is not None and growth <= bound
    md = ["## 5. Load/unload soak", "",
          "%d RepositoryModelLoad + RepositoryModelUnload cycles (`inferctl load/unload`) of "
          "`heavy` (32 MiB of weights: W [8192, 1024] fp32); after %d timing cycles, identity "
          "and mlp_dynamic serve (4 streams each) through all the others. Bound: VmRSS after "
          "the cycles within %s of VmRSS after cycle %d (warm-up, under the same load)%s. "
          "**%s**: %d failed requests, server %s." % (
              cycles, probe, fmt_bytes(bound), warmup,
              "" if f["load_left"] else " (the load ended before the cycles did)",
              "PASS" if passed else "FAIL", errors, "alive" if f["alive"] else "DIED"), "",
          table(["model", "C", "ok", "failed", "req/s", "p50", "p99", "max"], rows), "",
          table(["inferd memory", "bytes"], [
              ["VmRSS at start (identity, mlp_dynamic loaded, no load)",
               fmt_bytes(f["rss_start"])],
              ["VmRSS after cycle %d (under load)" % warmup, fmt_bytes(f["rss_warm"])],
              ["VmRSS max during the cycles (sampled after each)", fmt_bytes(f["rss_max"])],
              ["VmRSS after %d cycles (under load)" % cycles, fmt_bytes(f["rss_end"])],
              ["growth after the warm-up", "%+.2f MiB" % (growth / MIB)],
              ["cycles under load", "%d in %.0f s" % (cycles - probe, f["cycles_s"])],
          ]), ""]
    return "\n".join(md)


# --- main --------------------------------------------------------------------------------------

def environment_md(env, commands):
    def sh(cmd):
        try:
            return subprocess.check_output(cmd, cwd=ROOT, text=True, timeout=10).strip()
        except Exception:  # noqa: BLE001
            return "?"
    rev = sh(["git", "rev-parse", "--short", "HEAD"])
    dirty = "" if sh(["git", "status", "--porcelain", "--untracked-files=no"]) == "" else " + local changes"
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    return "\n".join([
        "# inferd load test report", "",
        "- date: %s" % datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "- commit: %s%s" % (rev, dirty),
        "- machine: %d CPUs, %s; load average at start %s (other work on the machine shows "
        "in the figures)" % (os.cpu_count(), sh(["uname", "-sr"]), load),
        "- scenarios: %s%s; raw JSON and logs in `%s`" % (", ".join(commands),
                                                        " (--quick)" if env.quick else "",
                                                        env.out),
        ""])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("command", choices=["transport", "memory", "engine", "soak", "unload",
                                        "batching", "all"])
    p.add_argument("--quick", action="store_true", help="short runs (~20 s soak), for CI")
    p.add_argument("--out", help="directory for the report, JSON and logs")
    p.add_argument("--soak-duration", type=int, help="seconds (default 180; 20 with --quick)")
    p.add_argument("--unload-cycles", type=int, help="load/unload cycles (default 500; 60 with "
                   "--quick)")
    args = p.parse_args()
    if not args.out:
        args.out = os.path.join("/tmp", "inferd_loadtest",
                                datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    os.makedirs(args.out, exist_ok=True)
    env = Env(args)
    commands = ["transport", "memory", "engine", "soak", "unload", "batching"] \
        if args.command == "all" \
        else [args.command]
    sections = [environment_md(env, commands)]
    funcs = {"transport": transport, "memory": memory, "engine": engine, "soak": soak,
             "unload": unload_soak, "batching": batching}
    failed = False
    t0 = time.time()
    try:
        for c in commands:
            log("scenario %s" % c)
            try:
                sections.append(funcs[c](env))
            except Exception as e:  # noqa: BLE001: report it, go on with the next scenario
                failed = True
                log("scenario %s FAILED: %s" % (c, e))
                sections.append("## %s\n\nFAILED: %s\n" % (c, e))
    finally:
        for proc in list(STARTED):
            stop(proc)
    sections.append("Total time: %.0f s.\n" % (time.time() - t0))
    report = os.path.join(args.out, "report.md")
    with open(report, "w") as f:
        f.write("\n".join(sections))
    log("report: %s" % report)
    soak_failed = any("**FAIL**" in s for s in sections)
    return 1 if failed or soak_failed else 0


if __name__ == "__main__":
    sys.exit(main())
