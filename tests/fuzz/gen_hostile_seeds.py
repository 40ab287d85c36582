#!/usr/bin/python3
"""Hostile seed models for the model loader's fuzz target (issue 12 case 1).

static_2_34.onnx: an MLP whose input is declared [2^34, 64] (oneDNN 2.6 divided by a dim it had
truncated to 32 bits: SIGFPE at load); rank_100.onnx: Relu over a rank-100 input. Both must be
refused at load with a message; as seeds they keep the fuzzer mutating around the bounds.
usage: gen_hostile_seeds.py OUT_DIR
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mlp(rows):
    w = numpy_helper.from_array(np.full((64, 64), 0.5, dtype=np.float32), "w")
    b = numpy_helper.from_array(np.ones(64, dtype=np.float32), "b")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"], name="matmul"),
        helper.make_node("Add", ["xw", "b"], ["h"], name="add"),
        helper.make_node("Relu", ["h"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes, "hostile_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, 64])], [w, b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def relu(dims):
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "hostile_rank",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    onnx.save(mlp(2**34), os.path.join(out, "static_2_34.onnx"))
    onnx.save(relu([1] * 100), os.path.join(out, "rank_100.onnx"))


if __name__ == "__main__":
    main()
