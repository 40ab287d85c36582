"""Recurrent models through inferd against ONNX Runtime: outputs (max abs error) and median latency.

Models (none is committed; they go to --work, default ~/.cache/inferd/rnn_models):
  torch_lstm, torch_gru, torch_rnn  PyTorch nn.LSTM / nn.GRU / nn.RNN, 2 layers, bidirectional,
                                    batch_first, seeded random weights, torch.onnx.export opset 17
  silero_vad, silero_vad_16k_op15   the pretrained Silero VAD models the PyPI wheel `silero-vad`
                                    ships (pip download silero-vad --no-deps; LSTMs inside If)

Run with the models virtualenv (torch, onnxruntime) after `bazel build //tools/inferctl`:
  /opt/inferd/models-venv/bin/python tools/model_zoo/rnn/compare.py [--threads 1] [--runs 200]
Prints one line per model: max abs error per output, inferd's and ORT's median latency (wall
time), and with one thread their CPU time per run as well, which other load on the machine
barely changes: ORT's from the calling thread's clock around each run, inferd's as the
difference in CPU time between two `inferctl run` invocations that differ only in --runs.
"""
import resource
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def export_torch(work):
    """nn.LSTM / nn.GRU / nn.RNN (2 layers, bidirectional, batch_first) -> opset-17 ONNX."""
    import torch

    class Net(torch.nn.Module):
        def __init__(self, kind):
            super().__init__()
            cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}[kind]
            self.rnn = cls(input_size=40, hidden_size=128, num_layers=2, bidirectional=True,
                           batch_first=True)

        def forward(self, x):
            y, state = self.rnn(x)
            return (y,) + (tuple(state) if isinstance(state, tuple) else (state,))

    models = {}
    for kind in ["lstm", "gru", "rnn"]:
        path = os.path.join(work, f"torch_{kind}.onnx")
        if not os.path.exists(path):
            torch.manual_seed(0)
            net = Net(kind).eval()
            x = torch.randn(4, 50, 40)
            outs = ["y", "h_n", "c_n"] if kind == "lstm" else ["y", "h_n"]
            torch.onnx.export(net, (x,), path, opset_version=17, input_names=["x"],
                              output_names=outs, dynamo=False,
                              dynamic_axes={"x": {0: "batch", 1: "time"}})
        rng = np.random.default_rng(1)
        models[f"torch_{kind}"] = (path, {"x": rng.standard_normal((4, 50, 40)).astype(np.float32)})
    return models


def silero(work):
    """The Silero VAD models shipped in the silero-vad wheel, with a 512-sample chunk at 16 kHz."""
    folder = os.path.join(work, "silero")
    if not glob.glob(os.path.join(folder, "**", "silero_vad.onnx"), recursive=True):
        subprocess.run([sys.executable, "-m", "pip", "download", "silero-vad", "--no-deps", "-d",
                        work], check=True)
        wheel = sorted(glob.glob(os.path.join(work, "silero_vad-*.whl")))[-1]
        zipfile.ZipFile(wheel).extractall(folder)
    rng = np.random.default_rng(2)
    feeds = {"input": (rng.standard_normal((1, 512)) * 0.1).astype(np.float32),
             "state": (rng.standard_normal((2, 1, 128)) * 0.1).astype(np.float32),
             "sr": np.array(16000, dtype=np.int64)}
    models = {}
    for name in ["silero_vad", "silero_vad_16k_op15"]:
        path = glob.glob(os.path.join(folder, "**", name + ".onnx"), recursive=True)[0]
        models[name] = (path, feeds)
    return models


def run_ort(path, feeds, threads, runs):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    outs = sess.run(names, feeds)
    times, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.thread_time()
        sess.run(names, feeds)
        times.append((time.perf_counter() - start) * 1e3)
        cpu.append((time.thread_time() - start_cpu) * 1e3)
    return dict(zip(names, outs)), float(np.median(times)), float(np.median(cpu))


def inferd_cpu_ms(inferctl, path, feeds, runs, tmp):
    """CPU ms per run of `inferctl run` at one thread: (CPU of runs + base) - (CPU of base)."""
    base = 20
    inputs = [f"--input={n}={os.path.join(tmp, f'in_{n}.npy')}" for n in feeds]
    totals = []
    for extra in [0, runs]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([inferctl, "run", path, "--threads=1", f"--runs={base + extra}",
                        "--warmup=3"] + inputs, capture_output=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        totals.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return (totals[1] - totals[0]) / runs * 1e3


def run_inferd(inferctl, path, feeds, threads, runs, tmp):
    args = [inferctl, "run", path, f"--threads={threads}", f"--runs={runs}", "--warmup=3",
            f"--output_dir={tmp}"]
    for name, value in feeds.items():
        f = os.path.join(tmp, f"in_{name}.npy")
        np.save(f, value)
        args.append(f"--input={name}={f}")
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        return None, None, (p.stderr or p.stdout).strip().splitlines()[-1:]
    m = re.search(r"p50[ =:]+([0-9.]+) ?(us|ms)", p.stdout)
    p50 = None
    if m:
        p50 = float(m.group(1)) / (1000.0 if m.group(2) == "us" else 1.0)
    outs = {os.path.basename(f)[:-4]: np.load(f) for f in glob.glob(os.path.join(tmp, "*.npy"))
            if not os.path.basename(f).startswith("in_")}
    return outs, p50, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--work", default=os.path.expanduser("~/.cache/inferd/rnn_models"))
    ap.add_argument("--inferctl", default=os.path.join(ROOT, "bazel-bin/tools/inferctl/inferctl"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--only", default="", help="substring of the model names to run")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    models = {}
    models.update(export_torch(args.work))
    models.update(silero(args.work))
    cpu_cols = f" {'inferd cpu ms':>13} {'ORT cpu ms':>10}" if args.threads == 1 else ""
    print(f"{'model':<22} {'max abs err':<40} {'inferd p50 ms':>14} {'ORT p50 ms':>11}{cpu_cols}")
    failed = 0
    for name, (path, feeds) in models.items():
        if args.only and args.only not in name:
            continue
        ref, ort_ms, ort_cpu = run_ort(path, feeds, args.threads, args.runs)
        with tempfile.TemporaryDirectory() as tmp:
            outs, p50, log = run_inferd(args.inferctl, path, feeds, args.threads, args.runs, tmp)
            cpu = ""
            if outs is not None and args.threads == 1:
                cpu = f" {inferd_cpu_ms(args.inferctl, path, feeds, args.runs, tmp):>13.3f}" \
                      f" {ort_cpu:>10.3f}"
        if outs is None:
            failed += 1
            print(f"{name:<22} inferd failed: {log}")
            continue
        errs = []
        for out_name, want in ref.items():
            got = outs.get(out_name)
            err = "missing" if got is None or got.shape != want.shape else \
                f"{np.max(np.abs(got.astype(np.float64) - want)):.2e}"
            errs.append(f"{out_name} {err}")
        p50_text = f"{p50:.3f}" if p50 is not None else "?"
        print(f"{name:<22} {', '.join(errs):<40} {p50_text:>14} {ort_ms:>11.3f}{cpu}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
