"""float16 and bfloat16 models end to end against ONNX Runtime: small CNN and transformer-block
models built with onnx.helper in float32, then converted the way converters and half-precision
exports write them (to_half below, our own converter in the manner of onnxconverter-common's
convert_float_to_float16): float weights, graph inputs / outputs and value infos become half,
Cast nodes that made float make half, and optionally
  - keep_io_types: graph inputs / outputs stay float32, with Casts at the graph's edges;
  - block: ops kept in float32 with Casts around them (converters' op block lists).
inferd runs these through its precision widening pass (docs/half-precision.md).

References:
  - float16: ONNX Runtime on the float16 model itself (one thread, optimizations off; its CPU
    provider computes float16 ops it has no kernel for in float32 with casts around each node).
    inferd keeps whole regions in float32, so results differ by a few float16 roundings:
    tolerance rtol 1e-2, atol 2e-3 (outputs of order 1).
  - bfloat16: ONNX Runtime's CPU provider has almost no bfloat16 kernels (MatMul, Add, Relu,
    Softmax... are all refused), so the reference is ONNX Runtime on the float32 model fed the
    bfloat16 inputs and weights (exactly representable in float32), its outputs rounded to
    bfloat16: tolerance rtol 3e-2, atol 1e-2 (bfloat16 keeps 8 significant bits: 2^-8 = 0.4%
    per rounding, and inferd rounds only at region edges).
"""
import copy

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ort_case import CaseWriter

rng = np.random.default_rng(16)
F16_RTOL, F16_ATOL = 1e-2, 2e-3
BF16_RTOL, BF16_ATOL = 3e-2, 1e-2
OPSET = 17


def f32(*shape, scale=0.5):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def bf16_bits(a):
    """float32 -> bfloat16 bits, rounded to nearest even (NaN kept quiet)."""
    f = np.ascontiguousarray(a, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    sixteen = np.uint64(16)
    rounded = (u + np.uint64(0x7FFF) + ((u >> sixteen) & np.uint64(1))) >> sixteen
    quiet_nan = (u >> sixteen) | np.uint64(0x40)
    return np.where(np.isnan(f), quiet_nan, rounded).astype(np.uint16)


def bf16_value(a):
    """The float32 value of bf16_bits(a)."""
    return (bf16_bits(a).astype(np.uint32) << 16).view(np.float32)


def bf16_tensor(a, name=""):
    a = np.asarray(a, dtype=np.float32)
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.BFLOAT16
    t.dims.extend(a.shape)
    t.raw_data = bf16_bits(a).tobytes()
    return t


def half_tensor(t, dt):
    a = numpy_helper.to_array(t)
    if dt == TensorProto.FLOAT16:
        out = numpy_helper.from_array(a.astype(np.float16), t.name)
    else:
        out = bf16_tensor(a, t.name)
    return out


def to_half(model, dt=TensorProto.FLOAT16, keep_io_types=False, block=()):
    """A copy of float32 `model` with its float compute in `dt` (see the module docstring)."""
    m = copy.deepcopy(model)
    g = m.graph
    for i, t in enumerate(g.initializer):
        if t.data_type == TensorProto.FLOAT:
            g.initializer[i].CopyFrom(half_tensor(t, dt))
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = dt
            if n.op_type == "Constant" and a.name == "value" and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(half_tensor(a.t, dt))
    for vi in list(g.value_info):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = dt
    nodes = list(g.node)
    new_nodes = []
    float_values = {i.name for i in model.graph.input if i.type.tensor_type.elem_type == 1}
    float_values |= {t.name for t in model.graph.initializer if t.data_type == 1}
    for n in model.graph.node:
        is_cast = n.op_type == "Cast"
        to_float = is_cast and any(a.name == "to" and a.i == 1 for a in n.attribute)
        if not is_cast or to_float:
            float_values |= set(n.output)
    # Inputs and outputs: half, or float32 with Casts at the edges.
    renames = {}
    for vi in list(g.input) + list(g.output):
        if vi.type.tensor_type.elem_type != TensorProto.FLOAT:
            continue
        if not keep_io_types:
            vi.type.tensor_type.elem_type = dt
    if keep_io_types:
        for vi in g.input:
            if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
                renames[vi.name] = vi.name + "_half"
                new_nodes.append(helper.make_node("Cast", [vi.name], [vi.name + "_half"], to=dt,
                                                  name=vi.name + "_cast_in"))
    tail = []
    if keep_io_types:
        for vi in g.output:
            if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
                tail.append(helper.make_node("Cast", [vi.name + "_half"], [vi.name], to=1,
                                             name=vi.name + "_cast_out"))
                renames.setdefault("out:" + vi.name, vi.name + "_half")
    for n in nodes:
        n2 = copy.deepcopy(n)
        for k, x in enumerate(n2.input):
            n2.input[k] = renames.get(x, renames.get("out:" + x, x))
        for k, y in enumerate(n2.output):
            n2.output[k] = renames.get("out:" + y, y)
        if n.op_type in block:
            # Kept in float32: Casts in for its float inputs, Casts out for its outputs.
            for k, x in enumerate(n2.input):
                if n.input[k] in float_values:
                    new_nodes.append(helper.make_node("Cast", [x], [x + "_f32_" + n.name], to=1,
                                                      name=f"{n.name}_in{k}"))
                    n2.input[k] = x + "_f32_" + n.name
            outs = list(n2.output)
            for k, y in enumerate(outs):
                n2.output[k] = y + "_f32"
            new_nodes.append(n2)
            for k, y in enumerate(outs):
                new_nodes.append(helper.make_node("Cast", [y + "_f32"], [y], to=dt,
                                                  name=f"{n.name}_out{k}"))
        else:
            new_nodes.append(n2)
    del g.node[:]
    g.node.extend(new_nodes + tail)
    return m


def model(nodes, inputs, outputs, inits, name):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    return m


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def cnn():
    """Conv+bias -> Relu -> MaxPool -> Conv -> BatchNorm -> Sigmoid*x (SiLU) -> 1x1 Conv branch
    Add (residual) -> Concat -> GlobalAveragePool -> Flatten -> Gemm -> Softmax."""
    inits = [
        init("w1", f32(8, 3, 3, 3)), init("b1", f32(8)),
        init("w2", f32(8, 8, 3, 3, scale=0.2)), init("b2", f32(8)),
        init("scale", f32(8) + 1), init("bias", f32(8)), init("mean", f32(8, scale=0.1)),
        init("var", np.abs(f32(8)) + 0.5),
        init("w3", f32(8, 8, 1, 1)),
        init("wf", f32(10, 16, scale=0.3)), init("bf", f32(10)),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2],
                         name="pool1"),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
        helper.make_node("BatchNormalization", ["c2", "scale", "bias", "mean", "var"], ["n2"],
                         name="bn2"),
        helper.make_node("Sigmoid", ["n2"], ["s2"], name="sig2"),
        helper.make_node("Mul", ["n2", "s2"], ["a2"], name="silu2"),
        helper.make_node("Conv", ["p1", "w3"], ["c3"], name="conv3"),
        helper.make_node("Add", ["a2", "c3"], ["res"], name="residual"),
        helper.make_node("Concat", ["res", "p1"], ["cat"], axis=1, name="concat"),
        helper.make_node("GlobalAveragePool", ["cat"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "wf", "bf"], ["logits"], transB=1, name="fc"),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=-1, name="softmax"),
    ]
    return model(nodes, [vi("x", 1, [2, 3, 16, 16])],
                 [vi("probs", 1, [2, 10]), vi("logits", 1, [2, 10])], inits, "cnn"), {
                     "x": f32(2, 3, 16, 16, scale=1.0)}


def transformer(batch=2, seq=8, hidden=32, heads=4, ffn=64, vocab=50):
    """Token embedding (Gather) + positions, pre-LayerNorm attention with a boolean mask
    (Where), Split / Reshape / Transpose heads, Softmax, output projection, residual, then
    LayerNorm, MatMul, GELU (Erf), MatMul, residual; and the attention probabilities of head 0
    (Slice) as a second output."""
    d = hidden // heads
    inits = [
        init("emb", f32(vocab, hidden)), init("pos", f32(seq, hidden, scale=0.1)),
        init("ln1_s", f32(hidden) + 1), init("ln1_b", f32(hidden, scale=0.1)),
        init("wqkv", f32(hidden, 3 * hidden, scale=0.2)), init("bqkv", f32(3 * hidden, scale=0.1)),
        init("split", np.array([hidden] * 3, np.int64)),
        init("heads_shape", np.array([batch, seq, heads, d], np.int64)),
        init("merge_shape", np.array([batch, seq, hidden], np.int64)),
        init("inv_sqrt_d", np.array(1.0 / np.sqrt(d), np.float32)),
        init("neg", np.array(-1e4, np.float32)),
        init("wo", f32(hidden, hidden, scale=0.2)), init("bo", f32(hidden, scale=0.1)),
        init("ln2_s", f32(hidden) + 1), init("ln2_b", f32(hidden, scale=0.1)),
        init("w1", f32(hidden, ffn, scale=0.2)), init("b1", f32(ffn, scale=0.1)),
        init("w2", f32(ffn, hidden, scale=0.2)), init("b2", f32(hidden, scale=0.1)),
        init("sqrt2", np.array(np.sqrt(2.0), np.float32)),
        init("one", np.array(1.0, np.float32)), init("half", np.array(0.5, np.float32)),
        init("s0", np.array([0], np.int64)), init("s1", np.array([1], np.int64)),
        init("ax1", np.array([1], np.int64)),
    ]
    n = helper.make_node
    nodes = [
        n("Gather", ["emb", "ids"], ["tok"], name="embed"),
        n("Add", ["tok", "pos"], ["h0"], name="add_pos"),
        n("LayerNormalization", ["h0", "ln1_s", "ln1_b"], ["l1"], axis=-1, epsilon=1e-5,
          name="ln1"),
        n("MatMul", ["l1", "wqkv"], ["qkv0"], name="qkv_mm"),
        n("Add", ["qkv0", "bqkv"], ["qkv"], name="qkv_add"),
        n("Split", ["qkv", "split"], ["q0", "k0", "v0"], axis=-1, name="split"),
        n("Reshape", ["q0", "heads_shape"], ["q1"], name="q_heads"),
        n("Reshape", ["k0", "heads_shape"], ["k1"], name="k_heads"),
        n("Reshape", ["v0", "heads_shape"], ["v1"], name="v_heads"),
        n("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3], name="q_t"),
        n("Transpose", ["k1"], ["kt"], perm=[0, 2, 3, 1], name="k_t"),
        n("Transpose", ["v1"], ["v"], perm=[0, 2, 1, 3], name="v_t"),
        n("MatMul", ["q", "kt"], ["sc0"], name="scores"),
        n("Mul", ["sc0", "inv_sqrt_d"], ["sc1"], name="scale"),
        n("Where", ["mask", "sc1", "neg"], ["sc"], name="mask"),
        n("Softmax", ["sc"], ["att"], axis=-1, name="softmax"),
        n("MatMul", ["att", "v"], ["ctx0"], name="context"),
        n("Transpose", ["ctx0"], ["ctx1"], perm=[0, 2, 1, 3], name="ctx_t"),
        n("Reshape", ["ctx1", "merge_shape"], ["ctx"], name="merge"),
        n("MatMul", ["ctx", "wo"], ["o0"], name="o_mm"),
        n("Add", ["o0", "bo"], ["o"], name="o_add"),
        n("Add", ["h0", "o"], ["h1"], name="residual1"),
        n("LayerNormalization", ["h1", "ln2_s", "ln2_b"], ["l2"], axis=-1, epsilon=1e-5,
          name="ln2"),
        n("MatMul", ["l2", "w1"], ["f0"], name="ffn1_mm"),
        n("Add", ["f0", "b1"], ["f1"], name="ffn1_add"),
        n("Div", ["f1", "sqrt2"], ["g0"], name="gelu_div"),
        n("Erf", ["g0"], ["g1"], name="gelu_erf"),
        n("Add", ["g1", "one"], ["g2"], name="gelu_add"),
        n("Mul", ["f1", "g2"], ["g3"], name="gelu_mul"),
        n("Mul", ["g3", "half"], ["g"], name="gelu_half"),
        n("MatMul", ["g", "w2"], ["f2"], name="ffn2_mm"),
        n("Add", ["f2", "b2"], ["f3"], name="ffn2_add"),
        n("Add", ["h1", "f3"], ["y"], name="residual2"),
        n("Slice", ["att", "s0", "s1", "ax1"], ["att0"], name="head0"),
    ]
    ids = rng.integers(0, vocab, size=(batch, seq)).astype(np.int64)
    mask = np.tril(np.ones((seq, seq), bool)).reshape(1, 1, seq, seq)
    return model(nodes,
                 [vi("ids", TensorProto.INT64, [batch, seq]),
                  vi("mask", TensorProto.BOOL, [1, 1, seq, seq])],
                 [vi("y", 1, [batch, seq, hidden]), vi("att0", 1, [batch, 1, seq, seq])],
                 inits, "transformer"), {"ids": ids, "mask": mask}


def mlp_input():
    """A float-input MLP block (the input itself half): MatMul, Add, Relu, MatMul, Tanh,
    ReduceMean, Clip."""
    inits = [init("w1", f32(16, 24, scale=0.3)), init("b1", f32(24)),
             init("w2", f32(24, 8, scale=0.3)), init("lo", np.array(-0.5, np.float32)),
             init("hi", np.array(0.5, np.float32))]
    n = helper.make_node
    nodes = [
        n("MatMul", ["x", "w1"], ["a"], name="mm1"),
        n("Add", ["a", "b1"], ["b"], name="add1"),
        n("Relu", ["b"], ["c"], name="relu"),
        n("MatMul", ["c", "w2"], ["d"], name="mm2"),
        n("Tanh", ["d"], ["y"], name="tanh"),
        n("ReduceMean", ["y"], ["m"], axes=[1], keepdims=1, name="mean"),
        n("Clip", ["m", "lo", "hi"], ["mc"], name="clip"),
    ]
    return model(nodes, [vi("x", 1, [4, 16])], [vi("y", 1, [4, 8]), vi("mc", 1, [4, 1])], inits,
                 "mlp"), {"x": f32(4, 16, scale=1.0)}


def if_model():
    """An If whose branches compute in half: then = MatMul(x, w) + Relu, else = Sigmoid(x)."""
    def branch(name, nodes, out):
        return helper.make_graph(nodes, name, [], [vi(out, 1, [3, 3])])
    then_g = branch("then", [helper.make_node("MatMul", ["x", "w"], ["t0"], name="t_mm"),
                             helper.make_node("Relu", ["t0"], ["t"], name="t_relu")], "t")
    else_g = branch("else", [helper.make_node("Sigmoid", ["x"], ["e"], name="e_sig")], "e")
    nodes = [helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g,
                              name="if")]
    m = model(nodes, [vi("cond", TensorProto.BOOL, []), vi("x", 1, [3, 3])],
              [vi("y", 1, [3, 3])], [init("w", f32(3, 3))], "if")
    return m


def to_half_subgraphs(m, dt):
    """to_half for the If model: its branches' outputs are half too."""
    h = to_half(m, dt)
    for n in h.graph.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                for o in a.g.output:
                    o.type.tensor_type.elem_type = dt
    return h


def half_feeds(feeds, dt):
    out = {}
    for k, v in feeds.items():
        if v.dtype == np.float32:
            out[k] = v.astype(np.float16) if dt == TensorProto.FLOAT16 else bf16_tensor(v)
        else:
            out[k] = v
    return out


def bf16_reference(w, fp32_model, feeds):
    """ONNX Runtime on the float32 model with bfloat16-rounded weights and inputs; outputs
    rounded to bfloat16."""
    m = copy.deepcopy(fp32_model)
    for t in m.graph.initializer:
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(init(t.name, bf16_value(numpy_helper.to_array(t))))
    f = {k: (bf16_value(v) if v.dtype == np.float32 else v) for k, v in feeds.items()}
    names, outs = w.reference(m, f)
    return [bf16_tensor(o, n) for n, o in zip(names, outs)]


def main():
    w = CaseWriter.from_args("fp16")
    F16, BF16 = TensorProto.FLOAT16, TensorProto.BFLOAT16
    cnn_m, cnn_f = cnn()
    tr_m, tr_f = transformer()
    mlp_m, mlp_f = mlp_input()
    if_m = if_model()

    # float16, ONNX Runtime on the converted model as the reference.
    for name, m, f in (("cnn", cnn_m, cnn_f), ("transformer", tr_m, tr_f),
                       ("mlp", mlp_m, mlp_f)):
        w.write(f"{name}_fp16", to_half(m, F16), half_feeds(f, F16), F16_RTOL, F16_ATOL)
        w.write(f"{name}_fp16_io32", to_half(m, F16, keep_io_types=True), f, F16_RTOL,
                F16_ATOL)
    # Converters' block lists: Softmax / LayerNormalization / BatchNormalization kept float32.
    w.write("cnn_fp16_blocked", to_half(cnn_m, F16, block=("Softmax", "BatchNormalization")),
            half_feeds(cnn_f, F16), F16_RTOL, F16_ATOL)
    w.write("transformer_fp16_blocked",
            to_half(tr_m, F16, block=("Softmax", "LayerNormalization")), half_feeds(tr_f, F16),
            F16_RTOL, F16_ATOL)
    for cond in (True, False):
        x = f32(3, 3, scale=1.0)
        w.write(f"if_fp16_{'then' if cond else 'else'}", to_half_subgraphs(if_m, F16),
                {"cond": np.array(cond), "x": x.astype(np.float16)}, F16_RTOL, F16_ATOL)

    # bfloat16: the float32 model on bfloat16 values as the reference (ORT has no bf16 kernels).
    for name, m, f in (("transformer", tr_m, tr_f), ("mlp", mlp_m, mlp_f)):
        w.write(f"{name}_bf16", to_half(m, BF16), half_feeds(f, BF16), BF16_RTOL, BF16_ATOL,
                expected=bf16_reference(w, m, f))
    print(f"wrote {w.count} cases")


if __name__ == "__main__":
    main()
