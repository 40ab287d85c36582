#!/usr/bin/python3
"""Wide-bottleneck test model: large intermediates, small output.

x [rows, 1] + y [1, cols] (broadcast Add: a [rows, cols] intermediate, 16 MiB at the defaults)
-> Relu -> Mul by a scalar initializer -> MatMul with W [cols, features] -> out [rows, features].
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
    p.add_argument("--rows", type=int, default=1024)
    p.add_argument("--cols", type=int, default=4096)
    p.add_argument("--features", type=int, default=4)
    args = p.parse_args()
    rng = np.random.default_rng(args.seed)
    rows = common.sym(args.dynamic, "rows", args.rows)

    scale = np.array(0.5)
    w = common.linear_weight(rng, args.cols, args.features)
    x = common.normal(rng, (args.rows, 1))
    y = common.normal(rng, (1, args.cols))

    g = common.GraphBuilder("wide_bottleneck")
    h = g.node("Add", "/wide/Add", [g.input("x", FLOAT, [rows, 1]),
                                    g.input("y", FLOAT, [1, args.cols])])
    h = g.node("Relu", "/wide/Relu", [h])
    h = g.node("Mul", "/wide/Mul", [h, g.init("wide.scale", scale)])
    g.node("MatMul", "/wide/MatMul", [h, g.init("wide.weight", w)], outputs=["out"])
    g.output("out", FLOAT, [rows, args.features])

    ref = (common.relu(x + y) * scale) @ w
    common.write_model(g.model(__doc__), args.out, [x, y], [ref], args.external_data)


if __name__ == "__main__":
    main()
