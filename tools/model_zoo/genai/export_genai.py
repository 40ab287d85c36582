#!/opt/inferd/models-venv/bin/python
"""Makes decoder LLMs in the ONNX Runtime GenAI layout: onnxruntime-genai's model builder run on
a transformers checkpoint that export_hf.py makes (seeded random weights, a tokenizer trained
here in the family's style).

The builder (python -m onnxruntime_genai.models.builder, onnxruntime-genai 0.18 from PyPI)
writes model.onnx (+ model.onnx.data) with com.microsoft GroupQueryAttention (past and present
sharing one buffer of the maximum length), MatMulNBits (int4), RotaryEmbedding,
SkipSimplifiedLayerNormalization, GatherBlockQuantized for tied int4 embeddings, opset 22, and
genai_config.json, tokenizer.json, tokenizer_config.json beside it.

The builder's CPU default for MatMulNBits is accuracy_level 4: ONNX Runtime then quantizes the
activations to int8 per block, which changes logits enough to flip greedy choices against any
float32 engine (inferd computes in float32 at every level). --accuracy-level 1 asks the builder
for float32 accumulation; the parity test data uses it.

Usage: export_genai.py OUT_DIR [--styles llama,qwen2] [--hidden 64] [--layers 2]
           [--precision int4|fp32] [--accuracy-level 4]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_hf  # noqa: E402


def export(style, out, hidden, layers, seed=0, init_range=0.3, precision="int4",
           accuracy_level=None):
    """Exports `style` into `out` (a GenAI folder); returns `out`."""
    tmp = tempfile.mkdtemp()
    try:
        export_hf.export(style, os.path.join(tmp, style), hidden=hidden, layers=layers,
                         opset=17, seed=seed, init_range=init_range)
        checkpoint = os.path.join(tmp, style, "checkpoint")
        built = os.path.join(tmp, "built")
        cmd = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", checkpoint, "-o",
               built, "-p", precision, "-e", "cpu", "-c", os.path.join(tmp, "cache")]
        if accuracy_level is not None:
            cmd += ["--extra_options", "accuracy_level=%d" % accuracy_level]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.makedirs(out, exist_ok=True)
        for f in os.listdir(built):
            shutil.copy(os.path.join(built, f), out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--styles", default="llama")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--precision", default="int4")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--accuracy-level", type=int, default=None)
    p.add_argument("--init-range", type=float, default=0.3)
    args = p.parse_args()
    for style in args.styles.split(","):
        dst = export(style, os.path.join(args.out, style + "_genai"), args.hidden, args.layers,
                     seed=args.seed, init_range=args.init_range, precision=args.precision,
                     accuracy_level=args.accuracy_level)
        print(style, "->", dst, sorted(os.listdir(dst)))


if __name__ == "__main__":
    main()
