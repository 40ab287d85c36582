"""A small BERT-like encoder in plain ONNX ops (opset 17), in the layout PyTorch's exporter
writes for BERT (embeddings with a Range for the positions, LayerNormalization, Q/K/V MatMul +
Add + Reshape + Transpose, scores / sqrt(head size) + the additive mask, Softmax, the erf Gelu),
so that ONNX Runtime's transformer optimizer recognises and fuses it."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

def bert_model(rng, layers=2, hidden=32, heads=4, inter=64, vocab=50, max_pos=16):
    """The model: inputs input_ids, attention_mask, token_type_ids (int64 [batch, seq]), output
    last_hidden_state [batch, seq, hidden]."""
    f = lambda *s, scale=0.2: (rng.standard_normal(s) * scale).astype(np.float32)
    inits, nodes = [], []
    def init(name, a):
        inits.append(numpy_helper.from_array(a, name)); return name
    def node(op, ins, outs, **kw):
        nodes.append(helper.make_node(op, ins, outs, **kw)); return outs[0]
    head = hidden // heads
    init("word", f(vocab, hidden)); init("posw", f(max_pos, hidden)); init("typew", f(2, hidden))
    init("ax0", np.array([0], np.int64)); init("ax1", np.array([1], np.int64))
    init("ax2", np.array([2], np.int64))
    init("one", np.array(1.0, np.float32)); init("neg", np.array(-10000.0, np.float32))
    init("half", np.array(0.5, np.float32)); init("sqrt2", np.array(np.sqrt(2.0), np.float32))
    init("sqrt_head", np.array(np.sqrt(head), np.float32))
    init("qkv_shape", np.array([0, 0, heads, head], np.int64))
    init("out_shape", np.array([0, 0, hidden], np.int64))
    # embeddings: word + position (0..S-1 from the ids' shape) + token type, LayerNorm
    node("Shape", ["input_ids"], ["ids_shape"])
    node("Gather", ["ids_shape", "one_i"], ["seq_len"], axis=0)
    init("one_i", np.array(1, np.int64)); init("zero_i", np.array(0, np.int64))
    init("step_i", np.array(1, np.int64))
    node("Range", ["zero_i", "seq_len", "step_i"], ["pos_range"])
    node("Unsqueeze", ["pos_range", "ax0"], ["position_ids"])
    node("Gather", ["word", "input_ids"], ["we"])
    node("Gather", ["posw", "position_ids"], ["pe"])
    node("Gather", ["typew", "token_type_ids"], ["te"])
    node("Add", ["we", "pe"], ["e1"])
    node("Add", ["e1", "te"], ["e2"])
    x = node("LayerNormalization", ["e2", init("emb_g", 1 + f(hidden)), init("emb_b", f(hidden))],
             ["emb_out"], axis=-1, epsilon=1e-12)
    # mask: (1 - mask[:, None, None, :]) * -10000
    node("Unsqueeze", ["attention_mask", "ax1"], ["m1"])
    node("Unsqueeze", ["m1", "ax2"], ["m2"])
    node("Cast", ["m2"], ["m3"], to=TensorProto.FLOAT)
    node("Sub", ["one", "m3"], ["m4"])
    mask = node("Mul", ["m4", "neg"], ["mask_add"])
    for l in range(layers):
        p = f"l{l}_"
        def linear(inp, name, din, dout):
            mm = node("MatMul", [inp, init(p + name + "_w", f(din, dout))], [p + name + "_mm"])
            return node("Add", [init(p + name + "_b", f(dout)), mm], [p + name])
        def heads_of(t, perm):
            r = node("Reshape", [t, "qkv_shape"], [t + "_r"])
            return node("Transpose", [r], [t + "_t"], perm=perm)
        q = heads_of(linear(x, "q", hidden, hidden), [0, 2, 1, 3])
        k = heads_of(linear(x, "k", hidden, hidden), [0, 2, 3, 1])
        v = heads_of(linear(x, "v", hidden, hidden), [0, 2, 1, 3])
        s = node("MatMul", [q, k], [p + "scores"])
        s = node("Div", [s, "sqrt_head"], [p + "scaled"])
        s = node("Add", [s, mask], [p + "masked"])
        s = node("Softmax", [s], [p + "probs"], axis=-1)
        c = node("MatMul", [s, v], [p + "ctx"])
        c = node("Transpose", [c], [p + "ctx_t"], perm=[0, 2, 1, 3])
        c = node("Reshape", [c, "out_shape"], [p + "ctx_r"])
        a = linear(c, "o", hidden, hidden)
        a = node("Add", [a, x], [p + "res1"])
        x = node("LayerNormalization", [a, init(p + "ln1_g", 1 + f(hidden)),
                                        init(p + "ln1_b", f(hidden))], [p + "ln1"], axis=-1,
                 epsilon=1e-12)
        h = linear(x, "i", hidden, inter)
        # gelu: x * 0.5 * (1 + erf(x / sqrt 2))
        g = node("Div", [h, "sqrt2"], [p + "g1"])
        g = node("Erf", [g], [p + "g2"])
        g = node("Add", [g, "one"], [p + "g3"])
        g = node("Mul", [h, g], [p + "g4"])
        g = node("Mul", [g, "half"], [p + "g5"])
        o = linear(g, "f", inter, hidden)
        o = node("Add", [o, x], [p + "res2"])
        x = node("LayerNormalization", [o, init(p + "ln2_g", 1 + f(hidden)),
                                        init(p + "ln2_b", f(hidden))], [p + "ln2"], axis=-1,
                 epsilon=1e-12)
    node("Identity", [x], ["last_hidden_state"])
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                             ["batch", "seq", hidden])]
    g = helper.make_graph(nodes, "bert", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m
