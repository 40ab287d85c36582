"""Shared helpers for the test-model generators in tools/models/.

A generator builds a graph with GraphBuilder, computes reference outputs with numpy (float64,
cast to float32 at the end), and calls write_model() to lay out

    OUT/model.onnx                     opset 17, ir_version 8, checked with full_check
    OUT/weights.bin                    only with --external-data
    OUT/test_data_set_0/input_K.pb     one TensorProto per graph input, in graph order
    OUT/test_data_set_0/output_K.pb    one TensorProto per graph output, in graph order

which is the layout of the ONNX backend test data, so one reader serves both.
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, mapping, numpy_helper

OPSET = 17
IR_VERSION = 8
EXTERNAL_DATA_FILE = "weights.bin"
EXTERNAL_DATA_THRESHOLD = 1024  # bytes; smaller initializers stay inline

# The ops the first inferd engine has kernels for; a generator using anything else is a bug.
ALLOWED_OPS = frozenset([
    "MatMul", "Gemm", "Add", "Mul", "Relu", "Softmax", "Reshape", "Transpose", "Conv",
    "MaxPool", "LayerNormalization", "Gather", "Concat", "Constant",
])


def arg_parser(description):
    """An ArgumentParser with the flags every generator takes."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--out", required=True, help="output directory (created if missing)")
    p.add_argument("--seed", type=int, default=0, help="seed for weights and inputs")
    p.add_argument("--external-data", action="store_true",
                   help="store initializers of >= 1 KiB in weights.bin beside model.onnx")
    p.add_argument("--dynamic", action="store_true",
                   help="make batch / sequence dimensions symbolic in the graph signature")
    return p


class GraphBuilder:
    """Collects nodes, initializers and graph inputs / outputs, and names things uniquely.

    Node names follow the PyTorch exporter: name("/model/layers.0/self_attn", "Reshape") gives
    ".../Reshape", then ".../Reshape_1", ... A node's default output is "<node name>_output_0".
    """

    def __init__(self, name):
        self.graph_name = name
        self.nodes = []
        self.initializers = []
        self.inputs = []
        self.outputs = []
        self._counters = {}
        self._node_names = set()
        self._value_names = set()

    def name(self, scope, op):
        key = (scope, op)
        n = self._counters.get(key, 0)
        self._counters[key] = n + 1
        return "%s/%s" % (scope, op) if n == 0 else "%s/%s_%d" % (scope, op, n)

    def _claim_value(self, value):
        if value in self._value_names:
            raise ValueError("value name used twice: " + value)
        self._value_names.add(value)

    def input(self, name, elem_type, shape):
        self._claim_value(name)
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        return name

    def output(self, name, elem_type, shape):
        self.outputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        return name

    def init(self, name, array):
        """Adds an initializer (float32 or int64 numpy array); returns its name."""
        array = np.asarray(array)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        assert array.dtype in (np.float32, np.int64), (name, array.dtype)
        self._claim_value(name)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def node(self, op, name, inputs, outputs=None, **attrs):
        """Adds a node; returns its single output name, or the list when it has several."""
        assert op in ALLOWED_OPS, op
        assert name and name not in self._node_names, name
        self._node_names.add(name)
        if outputs is None:
            outputs = [name + "_output_0"]
        for o in outputs:
            self._claim_value(o)
        self.nodes.append(helper.make_node(op, list(inputs), list(outputs), name=name, **attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    def model(self, doc=""):
        graph = helper.make_graph(self.nodes, self.graph_name, self.inputs, self.outputs,
                                  initializer=self.initializers, doc_string=doc)
        m = helper.make_model(graph, producer_name="inferd-tools-models",
                              opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = IR_VERSION
        return m


def sym(dynamic, name, value):
    """A graph-signature dimension: the symbol `name` when dynamic, else the number."""
    return name if dynamic else value


def f32(a):
    """Rounds to float32 and back, so numpy references use exactly the values stored."""
    return np.asarray(a).astype(np.float32).astype(np.float64)


def normal(rng, shape, scale=1.0):
    """Seeded N(0, scale^2) values, float32-representable (as float64)."""
    return f32(rng.standard_normal(shape) * scale)


def linear_weight(rng, fan_in, fan_out):
    """[fan_in, fan_out] weight for MatMul(x, W), scaled so activations stay O(1)."""
    return normal(rng, (fan_in, fan_out), 1.0 / np.sqrt(fan_in))


# --- numpy references (float64) ---------------------------------------------------------------

def relu(x):
    return np.maximum(x, 0.0)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(x, scale, bias, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * scale + bias


# --- output ------------------------------------------------------------------------------------

def write_model(model, out_dir, inputs, outputs, external_data=False):
    """Checks `model`, writes it and one test data set to `out_dir`.

    inputs / outputs: numpy arrays in the order of the graph's inputs / outputs; float arrays
    are written as float32.
    """
    for n in model.graph.node:
        assert n.op_type in ALLOWED_OPS, n.op_type
    onnx.checker.check_model(model, full_check=True)
    assert len(inputs) == len(model.graph.input)
    assert len(outputs) == len(model.graph.output)

    os.makedirs(out_dir, exist_ok=True)
    weights = os.path.join(out_dir, EXTERNAL_DATA_FILE)
    if os.path.exists(weights):
        os.remove(weights)  # onnx appends to an existing external data file
    path = os.path.join(out_dir, "model.onnx")
    if external_data:
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=EXTERNAL_DATA_FILE, size_threshold=EXTERNAL_DATA_THRESHOLD,
                        convert_attribute=False)
    else:
        onnx.save_model(model, path)

    data_dir = os.path.join(out_dir, "test_data_set_0")
    os.makedirs(data_dir, exist_ok=True)
    for kind, values, infos in (("input", inputs, model.graph.input),
                                ("output", outputs, model.graph.output)):
        for i, (arr, info) in enumerate(zip(values, infos)):
            arr = np.asarray(arr)
            if arr.dtype == np.float64:
                arr = arr.astype(np.float32)
            want = mapping.TENSOR_TYPE_TO_NP_TYPE[info.type.tensor_type.elem_type]
            assert arr.dtype == want, (info.name, arr.dtype, want)
            t = numpy_helper.from_array(arr, info.name)
            with open(os.path.join(data_dir, "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(t.SerializeToString())


FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
