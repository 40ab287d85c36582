#!/usr/bin/python3
"""Writes the two models tests/server/triton_api_test.py serves (Debian's python3-onnx):

  offset/model.onnx: y = x + 1, x FP32 [n] (a large-IO model for the shared-memory path);
  pair/model.onnx:   y = a + b, a FP32 [n], b FP32 [m]: a request with n != m (neither 1)
                     passes the request checks and fails in the run (a failing request that
                     reached the model, for ModelStatistics' fail).

usage: gen_triton_test_models.py OUT_DIR
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.save(model, path)


def main():
    out = sys.argv[1]
    one = numpy_helper.from_array(np.ones([1], dtype=np.float32), name="one")
    save(helper.make_graph(
        [helper.make_node("Add", ["x", "one"], ["y"], name="add")], "offset",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])], [one]),
        os.path.join(out, "offset", "model.onnx"))
    save(helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"], name="add")], "pair",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n"]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, ["m"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["k"])]),
        os.path.join(out, "pair", "model.onnx"))


if __name__ == "__main__":
    main()
