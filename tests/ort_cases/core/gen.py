"""Existing kernels against ONNX Runtime on seeded random inputs: Resize in every mode and
coordinate transformation, Einsum equations, LayerNormalization over several axes, Softmax and
Gather with negative axes. (The ONNX node tests cover each of these with one or two fixed
examples; these vary shapes and attributes.)"""
import numpy as np
from onnx import TensorProto, helper

from ort_case import CaseWriter

OPSET = 17
rng = np.random.default_rng(7)


def model(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    return m


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def resize_cases(w):
    x = rng.standard_normal((1, 3, 7, 9)).astype(np.float32)
    coords = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"]
    for mode in ["nearest", "linear", "cubic"]:
        for coord in coords:
            # align_corners with a fractional resized length (9 * 1.5 = 13.5): ONNX's reference
            # (and the node tests, and inferd) divide by length_resized - 1 = 12.5, as ONNX's
            # maintainers intend (onnx/onnx#2462); ONNX Runtime divides by the output size - 1.
            # Those cases are the node tests' to check: here the resized lengths are whole.
            scales = [(1, 1, 2.0, 1.5), (1, 1, 0.6, 0.5)]
            if coord == "align_corners":
                scales = [(1, 1, 2.0, 2.0 / 3 * 3), (1, 1, 3.0 / 7, 1.0 / 3)]
            for scale in scales:
                attrs = {"mode": mode, "coordinate_transformation_mode": coord}
                if mode == "nearest":
                    attrs["nearest_mode"] = "floor" if scale[2] > 1 else "round_prefer_ceil"
                scales = helper.make_tensor("scales", TensorProto.FLOAT, [4], scale)
                node = helper.make_node("Resize", ["x", "", "scales"], ["y"], **attrs)
                m = model([node], [vi("x", x.shape)], [vi("y", None)], [scales])
                tag = "up" if scale[2] > 1 else "down"
                w.write(f"resize_{mode}_{coord}_{tag}", m, {"x": x}, rtol=1e-4, atol=1e-5)


def einsum_cases(w):
    for i, (eq, shapes) in enumerate([
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        ("bhqd,bhkd->bhqk", [(1, 2, 5, 8), (1, 2, 6, 8)]),
        ("ij->ji", [(3, 7)]),
        ("i,i->", [(11,), (11,)]),
        ("bij->bj", [(2, 3, 4)]),
        ("ik,jk->ij", [(4, 6), (5, 6)]),
    ]):
        names = [f"x{k}" for k in range(len(shapes))]
        feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in zip(names, shapes)}
        node = helper.make_node("Einsum", names, ["y"], equation=eq)
        m = model([node], [vi(n, s) for n, s in zip(names, shapes)], [vi("y", None)])
        w.write(f"einsum_{i}", m, feeds)


def layernorm_cases(w):
    x = rng.standard_normal((2, 5, 16)).astype(np.float32)
    for axis in [-1, -2, 1]:
        norm_shape = x.shape[axis:]
        scale = helper.make_tensor("s", TensorProto.FLOAT, norm_shape,
                                   rng.standard_normal(norm_shape).astype(np.float32).ravel())
        bias = helper.make_tensor("b", TensorProto.FLOAT, norm_shape,
                                  rng.standard_normal(norm_shape).astype(np.float32).ravel())
        node = helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=axis,
                                epsilon=1e-5)
        m = model([node], [vi("x", x.shape)], [vi("y", None)], [scale, bias])
        w.write(f"layernorm_axis{axis}", m, {"x": x})


def softmax_gather_cases(w):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    for axis in [-1, 0, 1]:
        node = helper.make_node("Softmax", ["x"], ["y"], axis=axis)
        w.write(f"softmax_axis{axis}", model([node], [vi("x", x.shape)], [vi("y", None)]), {"x": x})
    idx = np.array([[0, -1], [2, 1]], dtype=np.int64)
    for axis in [0, -1]:
        node = helper.make_node("Gather", ["x", "i"], ["y"], axis=axis)
        m = model([node], [vi("x", x.shape), vi("i", idx.shape, TensorProto.INT64)],
                  [vi("y", None)])
        w.write(f"gather_axis{axis}", m, {"x": x, "i": idx})


def conv_fusion_cases(w):
    """Conv -> BatchNormalization -> activation, as exporters write CNNs: inferd folds the BN into
    the convolution's weights at load and applies the activation as a post-op (engine/rewrites.h);
    ONNX Runtime fuses the same way. Also the forms that must not fuse (an intermediate with a
    second reader, a Clip bound computed at run time)."""
    def conv_bn(prefix, c_in, c_out, group, bias, inits, nodes, x, k=3):
        w = rng.standard_normal((c_out, c_in // group, k, k)).astype(np.float32) * 0.3
        inits.append(helper.make_tensor(prefix + "w", TensorProto.FLOAT, w.shape, w.ravel()))
        ins = [x, prefix + "w"]
        if bias:
            b = rng.standard_normal(c_out).astype(np.float32)
            inits.append(helper.make_tensor(prefix + "b", TensorProto.FLOAT, [c_out], b))
            ins.append(prefix + "b")
        nodes.append(helper.make_node("Conv", ins, [prefix + "c"], pads=[k // 2] * 4, group=group))
        params = [rng.standard_normal(c_out) * 0.5 + 1.0, rng.standard_normal(c_out) * 0.2,
                  rng.standard_normal(c_out) * 0.3, rng.random(c_out) + 0.2]
        names = [prefix + n for n in ("scale", "shift", "mean", "var")]
        for n, p in zip(names, params):
            inits.append(helper.make_tensor(n, TensorProto.FLOAT, [c_out], p.astype(np.float32)))
        nodes.append(helper.make_node("BatchNormalization", [prefix + "c"] + names,
                                      [prefix + "bn"], epsilon=1e-3))
        return prefix + "bn"

    acts = [("Relu", {}), ("LeakyRelu", {"alpha": 0.1}), ("Elu", {"alpha": 0.8}),
            ("HardSigmoid", {"alpha": 0.25, "beta": 0.45}), ("HardSwish", {}), ("Sigmoid", {}),
            ("Tanh", {}), ("Clip", None), ("Silu", None)]
    x = rng.standard_normal((2, 8, 9, 10)).astype(np.float32)
    for op, attrs in acts:
        for group, bias in [(1, True), (4, False)]:
            inits, nodes = [], []
            t = conv_bn("a_", 8, 8, group, bias, inits, nodes, "x")
            if op == "Clip":
                inits += [helper.make_tensor("lo", TensorProto.FLOAT, [], [-0.4]),
                          helper.make_tensor("hi", TensorProto.FLOAT, [], [0.9])]
                nodes.append(helper.make_node("Clip", [t, "lo", "hi"], ["y"]))
            elif op == "Silu":  # x * sigmoid(x), as exporters write SiLU
                nodes.append(helper.make_node("Sigmoid", [t], ["s"]))
                nodes.append(helper.make_node("Mul", [t, "s"] if group == 1 else ["s", t], ["y"]))
            else:
                nodes.append(helper.make_node(op, [t], ["y"], **attrs))
            m = model(nodes, [vi("x", x.shape)], [vi("y", None)], inits)
            w.write(f"conv_bn_{op.lower()}_g{group}", m, {"x": x})
    # A block: 1x1 conv-bn-relu6 (Clip 0..6), depthwise conv-bn-hardswish, conv-bn + residual.
    inits, nodes = [], []
    t = conv_bn("p_", 8, 16, 1, False, inits, nodes, "x", k=1)
    inits += [helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0]),
              helper.make_tensor("six", TensorProto.FLOAT, [], [6.0])]
    nodes.append(helper.make_node("Clip", [t, "zero", "six"], ["r6"]))
    t = conv_bn("d_", 16, 16, 16, True, inits, nodes, "r6")
    nodes.append(helper.make_node("HardSwish", [t], ["hs"]))
    t = conv_bn("q_", 16, 16, 1, True, inits, nodes, "hs")
    nodes.append(helper.make_node("Add", [t, "r6"], ["y"]))
    m = model(nodes, [vi("x", x.shape)], [vi("y", None)], inits)
    w.write("conv_bn_block", m, {"x": x})
    # Not fused: the BN's input has a second reader; Clip's bound is a graph input.
    inits, nodes = [], []
    t = conv_bn("n_", 8, 8, 1, True, inits, nodes, "x")
    nodes.append(helper.make_node("Clip", [t, "", "hi"], ["y"]))
    nodes.append(helper.make_node("Relu", ["n_c"], ["z"]))
    hi = np.array(0.5, dtype=np.float32)
    m = model(nodes, [vi("x", x.shape), vi("hi", [])], [vi("y", None), vi("z", None)], inits)
    w.write("conv_bn_not_fused", m, {"x": x, "hi": hi})


def pad_conv_cases(w):
    """An explicit zero Pad before a Conv (TF-style "same" padding as exporters write it) folds
    into the Conv's pads (engine/rewrites.h); a Pad with another value or mode, or one over the
    channels, stays a node of its own."""
    x = rng.standard_normal((1, 6, 11, 9)).astype(np.float32)
    wt = rng.standard_normal((8, 6, 3, 3)).astype(np.float32) * 0.3
    for label, pads, value, mode, conv_pads in (
            ("same", [0, 0, 1, 1, 0, 0, 1, 1], 0.0, "constant", None),
            ("asym_plus_own", [0, 0, 0, 2, 0, 0, 1, 0], 0.0, "constant", [1, 1, 1, 1]),
            ("value", [0, 0, 1, 1, 0, 0, 1, 1], 0.5, "constant", None),
            ("reflect", [0, 0, 1, 1, 0, 0, 1, 1], 0.0, "reflect", None),
            ("channels", [0, 1, 1, 1, 0, 1, 1, 1], 0.0, "constant", None)):
        c_in = 6 + (2 if label == "channels" else 0)
        wl = wt if c_in == 6 else rng.standard_normal((8, c_in, 3, 3)).astype(np.float32) * 0.3
        inits = [helper.make_tensor("w", TensorProto.FLOAT, wl.shape, wl.ravel()),
                 helper.make_tensor("pads", TensorProto.INT64, [8], pads),
                 helper.make_tensor("v", TensorProto.FLOAT, [], [value])]
        attrs = {"strides": [2, 2]}
        if conv_pads:
            attrs["pads"] = conv_pads
        nodes = [helper.make_node("Pad", ["x", "pads", "v"], ["p"], mode=mode),
                 helper.make_node("Conv", ["p", "w"], ["y"], **attrs)]
        m = model(nodes, [vi("x", x.shape)], [vi("y", None)], inits)
        w.write(f"pad_conv_{label}", m, {"x": x})


def scaled_matmul_cases(w):
    """Attention scores as exporters write them: Q K^T, then Mul by (or Div by) a scalar constant;
    inferd folds the scalar into the product's output scale (FusedMatMul alpha)."""
    q = rng.standard_normal((2, 4, 19, 16)).astype(np.float32)
    k = rng.standard_normal((2, 4, 16, 19)).astype(np.float32)
    for op, c in (("Mul", 0.25), ("Div", 4.0)):
        inits = [helper.make_tensor("c", TensorProto.FLOAT, [], [c])]
        nodes = [helper.make_node("MatMul", ["q", "k"], ["s"]),
                 helper.make_node(op, ["s", "c"], ["y"])]
        m = model(nodes, [vi("q", q.shape), vi("k", k.shape)], [vi("y", None)], inits)
        w.write(f"matmul_{op.lower()}_scalar", m, {"q": q, "k": k})


def linear_gelu_cases(w):
    """Linear -> GELU (erf form) as exporters write it; inferd fuses MatMul + Add and then the
    GELU into one FusedMatMul with oneDNN's gelu_erf post-op (engine/rewrites.h)."""
    x = rng.standard_normal((2, 17, 48)).astype(np.float32)
    for form in ["x_a_half", "x_half_a", "mul_rsqrt2"]:
        wt = rng.standard_normal((48, 80)).astype(np.float32) * 0.2
        b = rng.standard_normal(80).astype(np.float32)
        inits = [helper.make_tensor("w", TensorProto.FLOAT, wt.shape, wt.ravel()),
                 helper.make_tensor("b", TensorProto.FLOAT, [80], b),
                 helper.make_tensor("sqrt2", TensorProto.FLOAT, [], [1.4142135]),
                 helper.make_tensor("rsqrt2", TensorProto.FLOAT, [], [0.70710677]),
                 helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]),
                 helper.make_tensor("half", TensorProto.FLOAT, [], [0.5])]
        nodes = [helper.make_node("MatMul", ["x", "w"], ["t"]),
                 helper.make_node("Add", ["b", "t"], ["h"])]
        if form == "mul_rsqrt2":
            nodes.append(helper.make_node("Mul", ["h", "rsqrt2"], ["d"]))
        else:
            nodes.append(helper.make_node("Div", ["h", "sqrt2"], ["d"]))
        nodes += [helper.make_node("Erf", ["d"], ["e"]),
                  helper.make_node("Add", ["e", "one"], ["a"])]
        if form == "x_half_a":
            nodes += [helper.make_node("Mul", ["h", "half"], ["m"]),
                      helper.make_node("Mul", ["m", "a"], ["y"])]
        else:
            nodes += [helper.make_node("Mul", ["h", "a"], ["m"]),
                      helper.make_node("Mul", ["m", "half"], ["y"])]
        m = model(nodes, [vi("x", x.shape)], [vi("y", None)], inits)
        w.write(f"linear_gelu_{form}", m, {"x": x})


if __name__ == "__main__":
    w = CaseWriter.from_args("core")
    resize_cases(w)
    einsum_cases(w)
    layernorm_cases(w)
    softmax_gather_cases(w)
    conv_fusion_cases(w)
    linear_gelu_cases(w)
    pad_conv_cases(w)
    scaled_matmul_cases(w)
    print(f"wrote {w.count} cases")
