"""Runs one model in one engine, in a subprocess of its own, and reads back what it did: the
one implementation of "time this model in inferd / in ONNX Runtime" that compare.py and
tools/model_zoo/check.py share.

  inferd: `inferctl run MODEL --input NAME=FILE.npy ... --runs N --warmup W --threads T
          [--output-dir DIR]` (the engine as the server runs it)
  ORT:    `ort_bench.py --model MODEL --input ... ` under the test venv's Python (onnxruntime
          from PyPI), which prints the same "p50 X ms" line

Each engine runs in its own process so that its peak resident memory (VmHWM of that one child,
see spawn) is its own. Standard library only.

Example:
  r = run_inferd("bazel-bin/tools/inferctl/inferctl", "model.onnx", [("x", "x.npy")],
                 threads=2, runs=50)
  if r.ok: print(r.p50_ms, r.peak_rss_mib)
  else: print(r.error)          # first line of the engine's refusal or failure
"""

import collections
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_BENCH = os.path.join(HERE, "ort_bench.py")
# The test virtualenv (deploy/requirements-test.txt): onnxruntime 1.23.2, the reference engine.
ORT_PYTHON = os.environ.get("INFERD_ORT_PYTHON", "/opt/inferd/venv/bin/python")

P50 = re.compile(r"p50 ([0-9.]+) ms")

# ok: the command exited 0 and printed a p50; error: its first line of complaint otherwise, and
# reasons: the "  - REASON [nodes ...]" lines that follow it when the engine lists several
# (inferd's loader names every reason a model cannot run), node lists cut off.
Result = collections.namedtuple("Result", "ok p50_ms peak_rss_mib error reasons stdout seconds")


def _vm_hwm_mib(pid):
    """The process's peak resident set (VmHWM) so far, or None once it has exited."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def spawn(cmd, timeout_s, poll_s=0.01):
    """Runs cmd; returns (exit code, stdout, stderr, peak RSS in MiB of that process, seconds).
    On timeout the process is killed and the exit code is -9.

    The peak is the child's VmHWM, read every poll_s while it runs (it only grows, so the last
    read before exit is the peak but for what the final few ms added). Not ru_maxrss: Linux
    carries the high-water mark of the address space a child had before exec (the parent's,
    shared through vfork or copied by fork) into ru_maxrss, so a large parent inflates it."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        peak, status = 0.0, None
        while status is None:
            hwm = _vm_hwm_mib(proc.pid)
            if hwm is not None:
                peak = max(peak, hwm)
            pid, st = os.waitpid(proc.pid, os.WNOHANG)
            if pid:
                status = st
            elif time.monotonic() - t0 > timeout_s:
                os.kill(proc.pid, signal.SIGKILL)
                status = os.waitpid(proc.pid, 0)[1]
            else:
                time.sleep(poll_s)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        seconds = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read(), err.read(), peak, seconds


def _first_error(code, stdout, stderr, prefix):
    lines = [l for l in stderr.splitlines() if l.strip()]
    mine = [l for l in lines if l.startswith(prefix)]
    line = (mine or lines or ["exit code %d, nothing on stderr" % code])[0]
    if code == -9:
        line = "timed out (killed); " + line
    elif code < 0:
        line = "killed by signal %d; %s" % (-code, line)
    return line


def _reasons(stderr, first):
    lines = stderr.splitlines()
    if first not in lines:
        return []
    reasons = []
    for line in lines[lines.index(first) + 1:]:
        if not line.startswith("  - "):
            break
        reasons.append(re.sub(r" \[nodes? '.*\]$", "", line[4:]))
    return reasons


def _result(cmd, timeout_s, prefix):
    code, stdout, stderr, rss, seconds = spawn(cmd, timeout_s)
    m = P50.search(stdout)
    if code == 0 and m:
        return Result(True, float(m.group(1)), rss, "", [], stdout, seconds)
    first = _first_error(code, stdout, stderr, prefix)
    return Result(False, None, rss, first, _reasons(stderr, first), stdout, seconds)


def _feeds(feeds):
    return [a for name, path in feeds for a in ("--input", "%s=%s" % (name, path))]


def run_inferd(inferctl, model, feeds, threads=1, runs=10, warmup=1, output_dir=None,
               timeout_s=600, extra=()):
    """feeds: [(input name, .npy path)]."""
    cmd = [inferctl, "run", model] + _feeds(feeds) + [
        "--runs", str(runs), "--warmup", str(warmup), "--threads", str(threads)] + list(extra)
    if output_dir:
        os.makedirs(output_dir, exist_ok=True)
        cmd += ["--output-dir", output_dir]
    return _result(cmd, timeout_s, "inferctl run:")


def run_ort(model, feeds, threads=1, runs=10, warmup=1, output_dir=None, timeout_s=600,
            extra=()):
    cmd = [ORT_PYTHON, ORT_BENCH, "--model", model] + _feeds(feeds) + [
        "--runs", str(runs), "--warmup", str(warmup), "--threads", str(threads)] + list(extra)
    if output_dir:
        cmd += ["--output-dir", output_dir]
    return _result(cmd, timeout_s, "ort_bench.py:")


def ort_version():
    code, stdout, stderr, _, _ = spawn([ORT_PYTHON, ORT_BENCH, "--baseline"], 120)
    return stdout.split()[1] if code == 0 else "unavailable (%s)" % stderr.strip()[-200:]


def ort_baseline_rss_mib():
    """Peak RSS of the ORT harness that imports numpy and onnxruntime and runs nothing: the part
    of ORT's peak RSS figure that is Python's, not the model's."""
    return spawn([ORT_PYTHON, ORT_BENCH, "--baseline"], 120)[3]


def output_file(out_dir, name):
    """Where both engines write output `name` (inferctl and ort_bench.py replace '/' by '_')."""
    return os.path.join(out_dir, name.replace("/", "_") + ".npy")


if __name__ == "__main__":
    sys.exit(__doc__)
