#!/usr/bin/python3
"""A model slow to load and small on disk: --layers x (MatMul + Relu), x FP32 [64, 256].

Every MatMul shares one 256x256 weight, so the file stays small (256 KiB) while the engine plans
and creates a kernel per node: the start-up SIGTERM test (e2e_hardening_test) loads several of
them to have a start-up that lasts seconds. Its output is not checked.
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="directory for model.onnx")
    p.add_argument("--layers", type=int, default=2000)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((256, 256)) / 16).astype(np.float32)
    nodes = []
    prev = "x"
    for i in range(args.layers):
        nodes.append(helper.make_node("MatMul", [prev, "w"], [f"m{i}"], name=f"/l{i}/MatMul"))
        out = "y" if i == args.layers - 1 else f"r{i}"
        nodes.append(helper.make_node("Relu", [f"m{i}"], [out], name=f"/l{i}/Relu"))
        prev = out
    graph = helper.make_graph(
        nodes, "slow_load",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 256])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(args.out, exist_ok=True)
    onnx.save(model, os.path.join(args.out, "model.onnx"))


if __name__ == "__main__":
    main()
