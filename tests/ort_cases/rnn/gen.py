"""LSTM, GRU and RNN against ONNX Runtime on seeded random inputs, over the attribute space:
directions x layouts x weights as initializers (inferd's oneDNN path where the attributes allow
it) or as graph inputs (its own code) x initial states x missing outputs; every named activation
with alpha/beta; clip; input_forget; peepholes; sequence_lens (full, uneven, zero); GRU's
linear_before_reset 0 and 1; opsets 7 and 14; and an LSTM inside an If (the voice-activity
models' shape).

References: ONNX Runtime (one thread, optimizations off). ONNX Runtime refuses layout=1
("batchwise recurrent operations are not supported"), so for layout-1 cases the reference is
ORT's run of the same node in layout 0 on the transposed inputs, its outputs transposed back.
Alpha/beta are always given: where an activation's default is left to the runtime, ORT's differ
from the ONNX operators' (ThresholdedRelu 0 vs 1.0, Affine and ScaledTanh 0) and inferd follows
the operators (docs/kernels-rnn.md)."""
import numpy as np
from onnx import TensorProto, helper

from ort_case import CaseWriter

rng = np.random.default_rng(13)
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
OUTPUTS = {"LSTM": ["Y", "Y_h", "Y_c"], "GRU": ["Y", "Y_h"], "RNN": ["Y", "Y_h"]}
RTOL, ATOL = 1e-4, 2e-5


def f32(*shape, scale=0.5):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


class Case:
    """One recurrent node: its attributes, inputs (numpy, None for absent) and wanted outputs."""

    def __init__(self, op, t=5, n=3, i=4, c=6, direction="forward", layout=0, const=True,
                 bias=True, init=False, peephole=False, lens=None, outputs=None, opset=14,
                 **attrs):
        self.op, self.layout, self.const, self.opset = op, layout, const, opset
        self.attrs = dict(attrs, hidden_size=c)
        if direction != "forward":
            self.attrs["direction"] = direction
        if layout:
            self.attrs["layout"] = layout
        d, g = (2 if direction == "bidirectional" else 1), GATES[op]
        self.x = f32(t, n, i, scale=1.0)  # layout 0; transposed when written for layout 1
        self.w, self.r = f32(d, g * c, i), f32(d, g * c, c)
        self.b = f32(d, 2 * g * c) if bias else None
        self.lens = None if lens is None else np.array(lens, dtype=np.int32)
        self.h0 = f32(d, n, c) if init else None
        self.c0 = f32(d, n, c) if init and op == "LSTM" else None
        self.p = f32(d, 3 * c) if peephole else None
        self.outputs = outputs or OUTPUTS[op]

    def inputs(self):
        """(name, array) in the operator's input order; None for an absent input."""
        names = ["X", "W", "R", "B", "sequence_lens", "initial_h"]
        values = [self.x, self.w, self.r, self.b, self.lens, self.h0]
        if self.op == "LSTM":
            names += ["initial_c", "P"]
            values += [self.c0, self.p]
        while values and values[-1] is None:
            names.pop(), values.pop()
        return list(zip(names, values))

    def model(self, layout):
        """The node in `layout` (inputs given in that layout), weights as initializers when
        const."""
        node_inputs, graph_inputs, inits, feeds = [], [], [], {}
        for name, value in self.inputs():
            if value is None:
                node_inputs.append("")
                continue
            node_inputs.append(name)
            if layout == 1 and name in ("X", "initial_h", "initial_c"):
                value = value.transpose(1, 0, 2)
            dtype = TensorProto.INT32 if name == "sequence_lens" else TensorProto.FLOAT
            if self.const and name in ("W", "R", "B", "P"):
                inits.append(helper.make_tensor(name, dtype, value.shape, value.ravel()))
            else:
                graph_inputs.append(helper.make_tensor_value_info(name, dtype, value.shape))
                feeds[name] = value
        attrs = dict(self.attrs)
        if layout == 0:
            attrs.pop("layout", None)
        names = OUTPUTS[self.op]
        node_outputs = [o if o in self.outputs else "" for o in names]
        while node_outputs and node_outputs[-1] == "":
            node_outputs.pop()
        node = helper.make_node(self.op, node_inputs, node_outputs, **attrs)
        outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in self.outputs]
        g = helper.make_graph([node], "g", graph_inputs, outs, inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)])
        m.ir_version = 8
        return m, feeds

    def write(self, w, name):
        model, feeds = self.model(self.layout)
        expected = None
        if self.layout == 1:  # ORT has no layout 1: its layout-0 outputs, transposed
            ref_model, ref_feeds = self.model(0)
            _, outs = w.reference(ref_model, ref_feeds, self.outputs)
            expected = [o.transpose(2, 0, 1, 3) if o.ndim == 4 else o.transpose(1, 0, 2)
                        for o in outs]
        w.write(name, model, feeds, rtol=RTOL, atol=ATOL, expected=expected)


def path_sweep(w):
    """Directions x layouts x weights constant (oneDNN where the attributes allow) or not (own
    code) x initial states, for each operator (GRU with both linear_before_reset)."""
    variants = [("LSTM", {}), ("LSTM", {"peephole": True}), ("GRU", {}),
                ("GRU", {"linear_before_reset": 1}), ("RNN", {}),
                ("RNN", {"activations": ["Relu"]})]
    for op, extra in variants:
        tag = op.lower() + ("_peep" if extra.get("peephole") else "") + \
            ("_lbr" if extra.get("linear_before_reset") else "") + \
            ("_relu" if extra.get("activations") else "")
        for direction in ["forward", "reverse", "bidirectional"]:
            ex = dict(extra)
            if direction == "bidirectional" and "activations" in ex:
                ex["activations"] = ex["activations"] * 2
            for layout in [0, 1]:
                for const in [True, False]:
                    for init in [False, True]:
                        name = f"{tag}_{direction}_l{layout}_{'const' if const else 'input'}" + \
                            ("_init" if init else "")
                        Case(op, direction=direction, layout=layout, const=const, init=init,
                             **ex).write(w, name)


# Activations with alpha/beta where they take them (explicit: see the module's note).
NAMED = [("Relu", None, None), ("Tanh", None, None), ("Sigmoid", None, None),
         ("Affine", 0.7, 0.2), ("LeakyRelu", 0.2, None), ("ThresholdedRelu", 0.3, None),
         ("ScaledTanh", 1.5, 0.8), ("HardSigmoid", 0.3, 0.4), ("Elu", 0.9, None),
         ("Softsign", None, None), ("Softplus", None, None)]


def activation_cases(w):
    """Each named activation in each position of each operator, bidirectional where the
    positions allow a second direction with the defaults."""
    defaults = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}
    for op, positions in defaults.items():
        for k in range(len(positions)):
            for name, alpha, beta in NAMED:
                acts = list(positions)
                acts[k] = name
                attrs = {"activations": acts}
                if alpha is not None:
                    attrs["activation_alpha"] = [alpha]
                if beta is not None:
                    attrs["activation_beta"] = [beta]
                Case(op, t=4, n=2, c=5, init=True, **attrs).write(
                    w, f"{op.lower()}_act{k}_{name.lower()}")
    # Two directions with different activations and alpha/beta consumed in order.
    Case("LSTM", direction="bidirectional",
         activations=["HardSigmoid", "Tanh", "Softsign", "Sigmoid", "LeakyRelu", "ScaledTanh"],
         activation_alpha=[0.25, 0.05, 1.2], activation_beta=[0.45, 0.7]).write(
        w, "lstm_bidi_mixed_activations")
    Case("GRU", direction="bidirectional", activations=["Sigmoid", "Elu", "HardSigmoid", "Tanh"],
         activation_alpha=[0.8, 0.3], activation_beta=[0.5]).write(w, "gru_bidi_mixed_activations")
    Case("RNN", direction="bidirectional", activations=["LeakyRelu", "LeakyRelu"],
         activation_alpha=[0.1, 0.3]).write(w, "rnn_bidi_leakyrelu")


def option_cases(w):
    """clip, input_forget, sequence_lens, missing outputs, opset 7, no bias."""
    for op in ["LSTM", "GRU", "RNN"]:
        o = op.lower()
        for direction in ["forward", "reverse", "bidirectional"]:
            Case(op, direction=direction, clip=0.6, init=True).write(w, f"{o}_clip_{direction}")
            for layout in [0, 1]:
                Case(op, direction=direction, layout=layout, lens=[5, 2, 4], init=True).write(
                    w, f"{o}_seqlens_{direction}_l{layout}")
        Case(op, lens=[5, 5, 5]).write(w, f"{o}_seqlens_full")  # oneDNN with sequence_lens
        Case(op, direction="bidirectional", lens=[3, 1, 4]).write(w, f"{o}_seqlens_noinit")
        Case(op, bias=False, init=True).write(w, f"{o}_nobias")
        Case(op, bias=False, const=False).write(w, f"{o}_nobias_input")
        Case(op, opset=7, direction="bidirectional", init=True).write(w, f"{o}_opset7")
        Case(op, t=1, n=1, i=3, c=4).write(w, f"{o}_one_step")
        Case(op, t=7, n=5, i=16, c=32, direction="bidirectional").write(w, f"{o}_wider")
        names = OUTPUTS[op]
        keeps = [names[:1], names[1:2]] + ([names[1:]] if len(names) > 2 else [])
        for keep in keeps:
            for const in [True, False]:
                Case(op, direction="bidirectional", outputs=keep, const=const, init=True).write(
                    w, f"{o}_outputs_{'_'.join(k.lower() for k in keep)}_"
                       f"{'const' if const else 'input'}")
    for direction in ["forward", "reverse", "bidirectional"]:
        Case("LSTM", direction=direction, input_forget=1, init=True).write(
            w, f"lstm_input_forget_{direction}")
        Case("LSTM", direction=direction, input_forget=1, peephole=True, clip=1.5,
             lens=[4, 5, 1], init=True).write(w, f"lstm_all_options_{direction}")
        for lbr in [0, 1]:
            Case("GRU", direction=direction, linear_before_reset=lbr, clip=0.8, lens=[2, 5, 3],
                 init=True).write(w, f"gru_lbr{lbr}_clip_seqlens_{direction}")
    # A sequence of length 0: Y zero, Y_h / Y_c zero (as ORT; its RNN reads before Y there).
    for op in ["LSTM", "GRU"]:
        Case(op, direction="bidirectional", lens=[0, 3, 5], init=True).write(
            w, f"{op.lower()}_seqlens_zero")
    Case("GRU", opset=7, linear_before_reset=1, init=True).write(w, "gru_opset7_lbr")
    Case("LSTM", peephole=True, lens=[5, 3, 5], init=True, layout=1, const=True).write(
        w, "lstm_peep_seqlens_l1")


def lstm_in_if(w):
    """An If whose branches hold an LSTM each (one reversed), as voice-activity models have:
    the condition picks the branch, X and the state come from the outer graph."""
    t, n, i, c = 6, 1, 8, 16
    x, h0, c0 = f32(t, n, i, scale=1.0), f32(1, n, c), f32(1, n, c)
    def branch(tag, direction):
        wt, rt, bt = f32(1, 4 * c, i), f32(1, 4 * c, c), f32(1, 8 * c)
        inits = [helper.make_tensor(f"{tag}_{k}", TensorProto.FLOAT, v.shape, v.ravel())
                 for k, v in [("W", wt), ("R", rt), ("B", bt)]]
        node = helper.make_node("LSTM", ["X", f"{tag}_W", f"{tag}_R", f"{tag}_B", "", "h0", "c0"],
                                [f"{tag}_Y", f"{tag}_Yh"], hidden_size=c, direction=direction)
        sq = helper.make_node("Squeeze", [f"{tag}_Y", "axis1"], [f"{tag}_out"])
        outs = [helper.make_tensor_value_info(f"{tag}_out", TensorProto.FLOAT, [t, n, c]),
                helper.make_tensor_value_info(f"{tag}_Yh", TensorProto.FLOAT, [1, n, c])]
        axis = helper.make_tensor("axis1", TensorProto.INT64, [1], [1])
        return helper.make_graph([node, sq], tag, [], outs, inits + [axis])
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    node = helper.make_node("If", ["cond"], ["out", "state"],
                            then_branch=branch("then", "forward"),
                            else_branch=branch("else", "reverse"))
    graph = helper.make_graph(
        [node], "vad_like",
        [cond, helper.make_tensor_value_info("X", TensorProto.FLOAT, [t, n, i]),
         helper.make_tensor_value_info("h0", TensorProto.FLOAT, [1, n, c]),
         helper.make_tensor_value_info("c0", TensorProto.FLOAT, [1, n, c])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [t, n, c]),
         helper.make_tensor_value_info("state", TensorProto.FLOAT, [1, n, c])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    for flag in [True, False]:
        w.write(f"lstm_in_if_{'then' if flag else 'else'}", m,
                {"cond": np.array(flag), "X": x, "h0": h0, "c0": c0}, rtol=RTOL, atol=ATOL)


def wide_input_cases(w):
    """An LSTM over a long sequence of wide inputs (more than 128, batch <= 4) takes the own code
    even with constant weights (oneDNN 2.6 reads its input weights at every step); a GRU does
    not. Both directions, with and without initial states."""
    for op in ["LSTM", "GRU"]:
        for direction in ["forward", "bidirectional"]:
            for init in [False, True]:
                name = f"{op.lower()}_wide_{direction}" + ("_init" if init else "")
                Case(op, t=12, n=2, i=160, c=8, direction=direction, init=init).write(w, name)


if __name__ == "__main__":
    w = CaseWriter.from_args("rnn")
    path_sweep(w)
    activation_cases(w)
    option_cases(w)
    lstm_in_if(w)
    wide_input_cases(w)
    print(f"wrote {w.count} cases")
