#!/opt/inferd/venv/bin/python
"""Converts a test data set's input_K.pb (onnx.TensorProto) files into NAME.npy files and prints
one NAME=PATH line per input, in graph order, for `inferctl run --input` and ort_bench.py --input.

Usage: pb_to_npy.py MODEL_DIR OUT_DIR   (reads MODEL_DIR/model.onnx, MODEL_DIR/test_data_set_0)
Also a module: convert(MODEL_DIR, OUT_DIR) -> [(name, path)] (compare.py).
"""

import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def convert(model_dir, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    graph = onnx.load(os.path.join(model_dir, "model.onnx"), load_external_data=False).graph
    inits = {i.name for i in graph.initializer}
    names = [i.name for i in graph.input if i.name not in inits]
    feeds = []
    for k, name in enumerate(names):
        tensor = onnx.TensorProto()
        with open(os.path.join(model_dir, "test_data_set_0", "input_%d.pb" % k), "rb") as f:
            tensor.ParseFromString(f.read())
        array = np.ascontiguousarray(numpy_helper.to_array(tensor))
        path = os.path.join(out_dir, "%s.npy" % name.replace("/", "_"))
        np.save(path, array)
        feeds.append((name, path))
    return feeds


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    for name, path in convert(sys.argv[1], sys.argv[2]):
        print("%s=%s" % (name, path))


if __name__ == "__main__":
    main()
