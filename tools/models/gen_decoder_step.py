#!/usr/bin/python3
"""Decoder-step test model: one decoding step of the gen_transformer.py layer stack with a KV cache.

Inputs:  input_ids int64 [batch, 1]; per layer N past_key_values.N.key / .value
         float [batch, heads, past_len, head_dim].
Outputs: logits float [batch, 1, vocab] (/lm_head/MatMul); per layer N present.N.key / .value
         float [batch, heads, past_len + 1, head_dim] = Concat(past, new) on axis 2.
The single query attends to all past positions and itself, so no mask is needed. Each present
tensor is both a graph output and an input of the layer's attention.
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import common  # noqa: E402
import gen_transformer as tf  # noqa: E402
from common import FLOAT, INT64  # noqa: E402


def main():
    p = common.arg_parser(__doc__.splitlines()[0])
    tf.add_model_flags(p)
    p.add_argument("--past", type=int, default=8, help="past length of the reference data")
    args = p.parse_args()
    tf.finish_model_flags(args)
    rng = np.random.default_rng(args.seed)
    w = tf.make_weights(rng, args, lm_head=True)
    hd = args.hidden // args.heads
    ids = rng.integers(0, args.vocab, size=(args.batch, 1), dtype=np.int64)
    pasts = [[common.normal(rng, (args.batch, args.heads, args.past, hd)) for _ in range(2)]
             for _ in range(args.layers)]

    g = common.GraphBuilder("decoder_step")
    batch = common.sym(args.dynamic, "batch", args.batch)
    past_len = common.sym(args.dynamic, "past_len", args.past)
    present_len = common.sym(args.dynamic, "present_len", args.past + 1)
    dims = (0, 1) if args.dynamic else (args.batch, 1)
    x = g.node("Gather", "/model/embed_tokens/Gather",
               [g.init("model.embed_tokens.weight", w["model.embed_tokens.weight"]),
                g.input("input_ids", INT64, [batch, 1])])
    ref = w["model.embed_tokens.weight"][ids]
    inputs, presents = [ids], []
    for n in range(args.layers):
        names = []
        for kind in ("key", "value"):
            names.append(g.input("past_key_values.%d.%s" % (n, kind), FLOAT,
                                 [batch, args.heads, past_len, hd]))
        for kind in ("key", "value"):
            names.append("present.%d.%s" % (n, kind))
        x = tf.add_layer(g, w, args, n, x, dims, past=names)
        ref, k, v = tf.layer_ref(w, args, n, ref, past=pasts[n])
        inputs += pasts[n]
        presents += [k, v]
    x = tf.add_layernorm(g, w, "/model/norm", "model.norm", x)
    ref = common.layer_norm(ref, w["model.norm.weight"], w["model.norm.bias"], tf.LN_EPS)
    g.node("MatMul", "/lm_head/MatMul", [x, g.init("lm_head.weight", w["lm_head.weight"])],
           outputs=["logits"])
    ref = ref @ w["lm_head.weight"]

    g.output("logits", FLOAT, [batch, 1, args.vocab])
    for n in range(args.layers):
        for kind in ("key", "value"):
            g.output("present.%d.%s" % (n, kind), FLOAT, [batch, args.heads, present_len, hd])

    common.write_model(g.model(__doc__), args.out, inputs, [ref] + presents, args.external_data)


if __name__ == "__main__":
    main()
