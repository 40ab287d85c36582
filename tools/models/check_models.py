#!/usr/bin/python3
"""Checks generated model directories: onnx checker (full_check), strict shape inference, and
that test_data_set_0 matches the graph signature.

Usage: /usr/bin/python3 tools/models/check_models.py [--require-static-shapes] DIR...
With --require-static-shapes every value in the graph must have a fully known inferred shape.
"""

import argparse
import os
import sys

sys.dont_write_bytecode = True

import onnx  # noqa: E402
from onnx import mapping, numpy_helper  # noqa: E402


def dims_of(value_info):
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in t.shape.dim]


def check_dir(d, require_static):
    problems = []
    model = onnx.load(os.path.join(d, "model.onnx"))  # also loads external data
    onnx.checker.check_model(model, full_check=True)
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)

    known = {vi.name: dims_of(vi) for vi in
             list(inferred.graph.value_info) + list(inferred.graph.output) +
             list(inferred.graph.input)}
    for init in model.graph.initializer:
        known[init.name] = list(init.dims)
    names = set()
    for node in model.graph.node:
        if not node.name or node.name in names:
            problems.append("node name empty or repeated: %r" % node.name)
        names.add(node.name)
        for o in node.output:
            shape = known.get(o)
            if require_static and (shape is None or any(not isinstance(x, int) for x in shape)):
                problems.append("%s: output %s has shape %s" % (node.name, o, shape))

    data = os.path.join(d, "test_data_set_0")
    for kind, infos in (("input", model.graph.input), ("output", model.graph.output)):
        for i, info in enumerate(infos):
            t = onnx.TensorProto()
            with open(os.path.join(data, "%s_%d.pb" % (kind, i)), "rb") as f:
                t.ParseFromString(f.read())
            arr = numpy_helper.to_array(t)
            want = dims_of(info)
            if t.name != info.name:
                problems.append("%s_%d.pb: name %r, graph says %r" % (kind, i, t.name, info.name))
            if t.data_type != info.type.tensor_type.elem_type:
                problems.append("%s_%d.pb: data_type %d" % (kind, i, t.data_type))
            if len(want) != arr.ndim or any(isinstance(w, int) and w != a
                                            for w, a in zip(want, arr.shape)):
                problems.append("%s_%d.pb: shape %s, graph says %s" % (kind, i, arr.shape, want))
            if arr.dtype != mapping.TENSOR_TYPE_TO_NP_TYPE[t.data_type]:
                problems.append("%s_%d.pb: dtype %s" % (kind, i, arr.dtype))
    return model, problems


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--require-static-shapes", action="store_true")
    p.add_argument("dirs", nargs="+")
    args = p.parse_args()
    failed = False
    for d in args.dirs:
        model, problems = check_dir(d, args.require_static_shapes)
        ops = sorted({n.op_type for n in model.graph.node})
        print("%-40s ok=%s nodes=%d initializers=%d ops=%s" % (
            d, not problems, len(model.graph.node), len(model.graph.initializer), ",".join(ops)))
        for pr in problems:
            print("  " + pr)
        failed |= bool(problems)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
