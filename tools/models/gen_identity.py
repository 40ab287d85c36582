#!/usr/bin/python3
"""Identity test model: y = Identity(x), x FP32 [n] with n symbolic.

The transport scenario of loadtest/ serves it to measure what inferd adds to the bare gRPC echo
(loadtest/echo_server). The reference data uses n = --n (16).
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402
from common import FLOAT  # noqa: E402

# Identity is outside the first engine's op list (common.ALLOWED_OPS); the CPU kernels serve it.
common.ALLOWED_OPS = common.ALLOWED_OPS | {"Identity"}


def main():
    p = common.arg_parser(__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=16)
    args = p.parse_args()
    import numpy as np
    rng = np.random.default_rng(args.seed)
    x = common.normal(rng, (args.n,))

    g = common.GraphBuilder("identity")
    g.node("Identity", "/identity/Identity", [g.input("x", FLOAT, ["n"])], outputs=["y"])
    g.output("y", FLOAT, ["n"])
    common.write_model(g.model(__doc__), args.out, [x], [x], args.external_data)


if __name__ == "__main__":
    main()
