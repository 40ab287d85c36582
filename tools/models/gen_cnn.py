#!/usr/bin/python3
"""CNN test model: image [N, 3, 32, 32] -> Conv+Relu, MaxPool, Conv+Relu, MaxPool, Reshape, Gemm,
Softmax -> probs [N, 10].
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import common  # noqa: E402
from common import FLOAT  # noqa: E402


def conv2d(x, w, b, pad):
    """Direct 2-D convolution, stride 1, symmetric zero padding; NCHW x, OIHW w (im2col)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    # cols[n, c, i, j, y, x] = xp[n, c, y + i, x + j]
    cols = np.empty((n, c, kh, kw, oh, ow), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i:i + oh, j:j + ow]
    y = np.einsum("ncijyx,ocij->noyx", cols, w)
    return y + b.reshape(1, o, 1, 1)


def maxpool2x2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def main():
    p = common.arg_parser(__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=1, help="batch size")
    args = p.parse_args()
    rng = np.random.default_rng(args.seed)
    n = args.batch
    batch = common.sym(args.dynamic, "batch", n)
    channels = [3, 16, 32]
    side = 32
    classes = 10

    g = common.GraphBuilder("cnn")
    h = g.input("image", FLOAT, [batch, channels[0], side, side])
    x = common.normal(rng, (n, channels[0], side, side))
    ref = x
    for i in range(2):
        cin, cout = channels[i], channels[i + 1]
        w = common.normal(rng, (cout, cin, 3, 3), 1.0 / np.sqrt(cin * 9))
        b = common.normal(rng, (cout,), 0.1)
        name = "conv%d" % (i + 1)
        h = g.node("Conv", "/%s/Conv" % name,
                   [h, g.init(name + ".weight", w), g.init(name + ".bias", b)],
                   kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
        h = g.node("Relu", "/relu%d/Relu" % (i + 1), [h])
        h = g.node("MaxPool", "/pool%d/MaxPool" % (i + 1), [h], kernel_shape=[2, 2],
                   strides=[2, 2])
        ref = maxpool2x2(common.relu(conv2d(ref, w, b, 1)))
        side //= 2

    flat = channels[-1] * side * side
    shape = np.array([0 if args.dynamic else n, flat], dtype=np.int64)
    h = g.node("Reshape", "/flatten/Reshape", [h, g.init("/flatten/Reshape_shape", shape)])
    ref = ref.reshape(n, flat)
    w = common.normal(rng, (classes, flat), 1.0 / np.sqrt(flat))
    b = common.normal(rng, (classes,), 0.1)
    h = g.node("Gemm", "/fc/Gemm", [h, g.init("fc.weight", w), g.init("fc.bias", b)], transB=1)
    ref = ref @ w.T + b
    g.node("Softmax", "/softmax/Softmax", [h], outputs=["probs"], axis=-1)
    g.output("probs", FLOAT, [batch, classes])

    common.write_model(g.model(__doc__), args.out, [x], [common.softmax(ref)],
                       args.external_data)


if __name__ == "__main__":
    main()
