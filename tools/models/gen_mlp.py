#!/usr/bin/python3
"""MLP test model: x [batch, 64] -> 3 x (MatMul + Add) with Relu between -> Softmax.

Graph outputs: probs [batch, 10] and logits [batch, 10]; logits (the output of /fc3/Add) is both
a declared graph output and the input of /softmax/Softmax.
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import common  # noqa: E402
from common import FLOAT  # noqa: E402


def main():
    p = common.arg_parser(__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=4, help="batch size of the reference data")
    args = p.parse_args()
    rng = np.random.default_rng(args.seed)

    sizes = [64, 128, 128, 10]
    g = common.GraphBuilder("mlp")
    batch = common.sym(args.dynamic, "batch", args.batch)
    h = g.input("x", FLOAT, [batch, sizes[0]])
    x = common.normal(rng, (args.batch, sizes[0]))
    ref = x
    layers = len(sizes) - 1
    for i in range(layers):
        fc = "fc%d" % (i + 1)
        w = common.linear_weight(rng, sizes[i], sizes[i + 1])
        b = common.normal(rng, (sizes[i + 1],), 0.1)
        h = g.node("MatMul", "/%s/MatMul" % fc, [h, g.init(fc + ".weight", w)])
        last = i == layers - 1
        h = g.node("Add", "/%s/Add" % fc, [h, g.init(fc + ".bias", b)],
                   outputs=["logits"] if last else None)
        ref = ref @ w + b
        if not last:
            h = g.node("Relu", "/relu%d/Relu" % (i + 1), [h])
            ref = common.relu(ref)
    g.node("Softmax", "/softmax/Softmax", [h], outputs=["probs"], axis=-1)
    g.output("probs", FLOAT, [batch, sizes[-1]])
    g.output("logits", FLOAT, [batch, sizes[-1]])

    common.write_model(g.model(__doc__), args.out, [x], [common.softmax(ref), ref],
                       args.external_data)


if __name__ == "__main__":
    main()
