#!/usr/bin/python3
"""Transformer test model: a pre-norm encoder of L layers with Hugging Face-style names.

input_ids int64 [batch, seq] -> embed_tokens (Gather) -> L x [LayerNorm, multi-head
self-attention (no mask), residual Add, LayerNorm, up_proj + Relu + down_proj, residual Add]
-> final LayerNorm -> last_hidden_state float [batch, seq, hidden].

Weights of MatMuls are stored [in, out] (y = x @ W). gen_decoder_step.py reuses make_weights()
and add_layer() from here, so both models have the same layer structure and names.
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import common  # noqa: E402
from common import FLOAT, INT64  # noqa: E402

LN_EPS = 1e-5


def add_model_flags(p):
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--ffn", type=int, default=0, help="FFN width (default 4 * hidden)")
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--batch", type=int, default=1)


def finish_model_flags(args):
    if args.ffn == 0:
        args.ffn = 4 * args.hidden
    if args.hidden % args.heads != 0:
        raise SystemExit("--hidden must be a multiple of --heads")


def make_weights(rng, args, lm_head=False):
    """Returns {initializer name: float64 array}, drawn in a fixed order."""
    h, f, v = args.hidden, args.ffn, args.vocab
    w = {"model.embed_tokens.weight": common.normal(rng, (v, h))}

    def norm(prefix):
        w[prefix + ".weight"] = 1.0 + common.normal(rng, (h,), 0.1)
        w[prefix + ".bias"] = common.normal(rng, (h,), 0.1)

    def linear(prefix, fan_in, fan_out, bias):
        w[prefix + ".weight"] = common.linear_weight(rng, fan_in, fan_out)
        if bias:
            w[prefix + ".bias"] = common.normal(rng, (fan_out,), 0.1)

    for n in range(args.layers):
        p = "model.layers.%d." % n
        norm(p + "input_layernorm")
        for proj in ("q_proj", "k_proj", "v_proj"):
            linear(p + "self_attn." + proj, h, h, bias=True)
        linear(p + "self_attn.o_proj", h, h, bias=False)
        norm(p + "post_attention_layernorm")
        linear(p + "mlp.up_proj", h, f, bias=True)
        linear(p + "mlp.down_proj", f, h, bias=False)
    norm("model.norm")
    if lm_head:
        linear("lm_head", h, v, bias=False)
    return {k: common.f32(a) for k, a in w.items()}


def attn_scale(args):
    """1 / sqrt(head_dim), as the float32 the model stores."""
    return common.f32(1.0 / np.sqrt(args.hidden // args.heads))


def add_layernorm(g, w, scope, prefix, x):
    return g.node("LayerNormalization", g.name(scope, "LayerNormalization"),
                  [x, g.init(prefix + ".weight", w[prefix + ".weight"]),
                   g.init(prefix + ".bias", w[prefix + ".bias"])], axis=-1, epsilon=LN_EPS)


def add_linear(g, w, scope, prefix, x):
    """MatMul (+ Add when the weights have a bias) under scope/<proj>/."""
    weight = g.init(prefix + ".weight", w[prefix + ".weight"])
    y = g.node("MatMul", g.name(scope, "MatMul"), [x, weight])
    if prefix + ".bias" in w:
        y = g.node("Add", g.name(scope, "Add"), [y, g.init(prefix + ".bias", w[prefix + ".bias"])])
    return y


def add_layer(g, w, args, n, x, dims, past=None):
    """Appends decoder layer n to g; x is [b, s, hidden]. Returns the layer's output name.

    dims: (b, s) as numbers, or 0 for a dimension Reshape should copy from its input (dynamic).
    past: None, or (past_key, past_value, present_key, present_value) value names; then the new
    key / value are concatenated after the past ones on axis 2 into the present outputs.
    """
    hd = args.hidden // args.heads
    scope = "/model/layers.%d" % n
    attn = scope + "/self_attn"
    p = "model.layers.%d." % n
    b, s = dims

    def shape(name, values):
        return g.init("%s/%s_shape" % (attn, name), np.array(values, dtype=np.int64))

    h = add_layernorm(g, w, scope + "/input_layernorm", p + "input_layernorm", x)
    q, k, v = [add_linear(g, w, "%s/%s" % (attn, proj), p + "self_attn." + proj, h)
               for proj in ("q_proj", "k_proj", "v_proj")]
    split = shape("Reshape", [b, s, args.heads, hd])
    q, k, v = [g.node("Reshape", g.name(attn, "Reshape"), [t, split]) for t in (q, k, v)]
    q = g.node("Transpose", g.name(attn, "Transpose"), [q], perm=[0, 2, 1, 3])
    if past is None:
        # K^T directly: [b, s, heads, hd] -> [b, heads, hd, s]
        kt = g.node("Transpose", g.name(attn, "Transpose"), [k], perm=[0, 2, 3, 1])
        v = g.node("Transpose", g.name(attn, "Transpose"), [v], perm=[0, 2, 1, 3])
    else:
        past_k, past_v, present_k, present_v = past
        k = g.node("Transpose", g.name(attn, "Transpose"), [k], perm=[0, 2, 1, 3])
        v = g.node("Transpose", g.name(attn, "Transpose"), [v], perm=[0, 2, 1, 3])
        k = g.node("Concat", g.name(attn, "Concat"), [past_k, k], outputs=[present_k], axis=2)
        v = g.node("Concat", g.name(attn, "Concat"), [past_v, v], outputs=[present_v], axis=2)
        kt = g.node("Transpose", g.name(attn, "Transpose"), [k], perm=[0, 1, 3, 2])
    scores = g.node("MatMul", g.name(attn, "MatMul"), [q, kt])
    scale = g.init(attn + "/Mul_scale", attn_scale(args))
    scores = g.node("Mul", g.name(attn, "Mul"), [scores, scale])
    probs = g.node("Softmax", g.name(attn, "Softmax"), [scores], axis=-1)
    ctx = g.node("MatMul", g.name(attn, "MatMul"), [probs, v])
    ctx = g.node("Transpose", g.name(attn, "Transpose"), [ctx], perm=[0, 2, 1, 3])
    ctx = g.node("Reshape", g.name(attn, "Reshape"), [ctx, shape("Reshape_3", [b, s, args.hidden])])
    o = add_linear(g, w, attn + "/o_proj", p + "self_attn.o_proj", ctx)
    x = g.node("Add", g.name(scope, "Add"), [x, o])

    h = add_layernorm(g, w, scope + "/post_attention_layernorm", p + "post_attention_layernorm", x)
    h = add_linear(g, w, scope + "/mlp/up_proj", p + "mlp.up_proj", h)
    h = g.node("Relu", g.name(scope + "/mlp/act_fn", "Relu"), [h])
    h = add_linear(g, w, scope + "/mlp/down_proj", p + "mlp.down_proj", h)
    return g.node("Add", g.name(scope, "Add"), [x, h])


def layer_ref(w, args, n, x, past=None):
    """numpy reference of add_layer(); returns (y, present_key, present_value)."""
    hd = args.hidden // args.heads
    p = "model.layers.%d." % n
    b, s, _ = x.shape

    def lin(prefix, t):
        y = t @ w[prefix + ".weight"]
        return y + w[prefix + ".bias"] if prefix + ".bias" in w else y

    def heads(t):  # [b, s, hidden] -> [b, heads, s, hd]
        return t.reshape(b, s, args.heads, hd).transpose(0, 2, 1, 3)

    h = common.layer_norm(x, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], LN_EPS)
    q, k, v = [heads(lin(p + "self_attn." + proj, h)) for proj in ("q_proj", "k_proj", "v_proj")]
    if past is not None:
        k = np.concatenate([past[0], k], axis=2)
        v = np.concatenate([past[1], v], axis=2)
    probs = common.softmax((q @ k.transpose(0, 1, 3, 2)) * attn_scale(args))
    ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, s, args.hidden)
    x = x + lin(p + "self_attn.o_proj", ctx)
    h = common.layer_norm(x, w[p + "post_attention_layernorm.weight"],
                          w[p + "post_attention_layernorm.bias"], LN_EPS)
    h = lin(p + "mlp.down_proj", common.relu(lin(p + "mlp.up_proj", h)))
    return x + h, k, v


def main():
    p = common.arg_parser(__doc__.splitlines()[0])
    add_model_flags(p)
    p.add_argument("--seq", type=int, default=16)
    args = p.parse_args()
    finish_model_flags(args)
    rng = np.random.default_rng(args.seed)
    w = make_weights(rng, args)
    ids = rng.integers(0, args.vocab, size=(args.batch, args.seq), dtype=np.int64)

    g = common.GraphBuilder("transformer")
    batch = common.sym(args.dynamic, "batch", args.batch)
    seq = common.sym(args.dynamic, "seq", args.seq)
    dims = (0, 0) if args.dynamic else (args.batch, args.seq)
    x = g.node("Gather", "/model/embed_tokens/Gather",
               [g.init("model.embed_tokens.weight", w["model.embed_tokens.weight"]),
                g.input("input_ids", INT64, [batch, seq])])
    ref = w["model.embed_tokens.weight"][ids]
    for n in range(args.layers):
        x = add_layer(g, w, args, n, x, dims)
        ref, _, _ = layer_ref(w, args, n, ref)
    x = g.node("LayerNormalization", "/model/norm/LayerNormalization",
               [x, g.init("model.norm.weight", w["model.norm.weight"]),
                g.init("model.norm.bias", w["model.norm.bias"])],
               outputs=["last_hidden_state"], axis=-1, epsilon=LN_EPS)
    ref = common.layer_norm(ref, w["model.norm.weight"], w["model.norm.bias"], LN_EPS)
    g.output("last_hidden_state", FLOAT, [batch, seq, args.hidden])

    common.write_model(g.model(__doc__), args.out, [ids], [ref], args.external_data)


if __name__ == "__main__":
    main()
