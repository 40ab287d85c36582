"""Writes test cases whose expected outputs come from ONNX Runtime, in the ONNX backend-test
layout the conformance runner reads (tests/conformance):

    OUT/<suite>/<name>/model.onnx
    OUT/<suite>/<name>/test_data_set_0/input_<k>.pb, output_<k>.pb   (TensorProtos, named)
    OUT/<suite>/<name>/tolerance.txt                                 ("rtol atol")

A generator (tests/ort_cases/<family>/gen.py) builds models with onnx.helper, feeds seeded
random inputs, and calls write_case; ort_case_test (ort_cases.bzl) runs the generator and then
the runner with --require_pass. Runs under /opt/inferd/venv/bin/python (onnx, onnxruntime and
numpy pinned in deploy/requirements-test.txt).

Example:
    from ort_case import CaseWriter
    w = CaseWriter.from_args("rnn")          # --out DIR from the command line
    w.write("lstm_fwd", model, {"X": x, "W": w_, "R": r})
"""
import argparse
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def _tensor(value, name):
    """A named TensorProto of `value`: a numpy array, or a TensorProto already (bfloat16 data,
    which numpy cannot hold, is passed that way)."""
    if isinstance(value, onnx.TensorProto):
        t = onnx.TensorProto()
        t.CopyFrom(value)
        t.name = name
        return t
    return numpy_helper.from_array(np.asarray(value), name)


class CaseWriter:
    def __init__(self, out_root, suite):
        self.dir = os.path.join(out_root, suite)
        os.makedirs(self.dir, exist_ok=True)
        self.count = 0

    @staticmethod
    def from_args(suite, argv=None):
        p = argparse.ArgumentParser(description=f"writes the '{suite}' ONNX Runtime cases")
        p.add_argument("--out", required=True, help="root directory; cases go to OUT/" + suite)
        args = p.parse_args(argv)
        return CaseWriter(args.out, suite)

    def reference(self, model, feeds, output_names=None):
        """ONNX Runtime's outputs for `feeds`, one thread, every graph optimization off (the
        kernels' own semantics, not a fused variant's)."""
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(model.SerializeToString(), so,
                                    providers=["CPUExecutionProvider"])
        names = output_names or [o.name for o in sess.get_outputs()]
        return names, sess.run(names, feeds)

    def write(self, name, model, feeds, rtol=1e-4, atol=1e-5, expected=None):
        """Checks `model`, runs ONNX Runtime on `feeds` (a dict name -> numpy array, in graph
        input order), and writes the case. `expected` (a list of arrays) overrides ORT's outputs
        where ORT is not the reference (say why at the call)."""
        names = [o.name for o in model.graph.output]
        if expected is None:
            names, expected = self.reference(model, feeds, names)
        # Graph outputs declared without a shape get one of the right rank with symbolic dims
        # (the checker wants a shape; the engine must still infer the sizes itself).
        for out, value in zip(model.graph.output, expected):
            tt = out.type.tensor_type
            if not tt.HasField("shape"):
                tt.shape.SetInParent()
                rank = len(value.dims) if isinstance(value, onnx.TensorProto) else np.asarray(
                    value).ndim
                for k in range(rank):
                    tt.shape.dim.add().dim_param = f"{out.name}_d{k}"
        onnx.checker.check_model(model)
        case = os.path.join(self.dir, name)
        data = os.path.join(case, "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        onnx.save(model, os.path.join(case, "model.onnx"))
        inputs = [i.name for i in model.graph.input if i.name in feeds]
        for k, n in enumerate(inputs):
            t = _tensor(feeds[n], n)
            with open(os.path.join(data, f"input_{k}.pb"), "wb") as f:
                f.write(t.SerializeToString())
        for k, (n, v) in enumerate(zip(names, expected)):
            t = _tensor(v, n)
            with open(os.path.join(data, f"output_{k}.pb"), "wb") as f:
                f.write(t.SerializeToString())
        with open(os.path.join(case, "tolerance.txt"), "w") as f:
            f.write(f"{rtol} {atol}\n")
        self.count += 1
        return expected
