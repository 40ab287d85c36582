"""The quantization operators against ONNX Runtime on seeded random inputs: QuantizeLinear /
DequantizeLinear (opsets 10, 13, 19, 21; per tensor, per axis, blocked; int8, uint8, int16,
uint16, int32; with and without zero points), DynamicQuantizeLinear, MatMulInteger and
ConvInteger (uint8 / int8, zero points scalar and per column / per channel), and small whole
models quantized by onnxruntime.quantization (quantize_dynamic; quantize_static in QDQ format)
from a float MLP and CNN built here (QDQ and QOperator formats; the MLP's QOperator form has
com.microsoft QGemm), the com.microsoft QLinearAdd, QLinearMul, QLinearSigmoid,
QLinearLeakyRelu, QLinearGlobalAveragePool and QGemm, and hand-built QDQ groups around MatMul,
Conv and Gemm that inferd fuses at load.

Tolerances: integer outputs are always compared exactly (the runner compares every integer type
bit for bit). Float outputs of DequantizeLinear are exact as well (one multiply in float32, as
ORT's). Whole models end in float: their tolerance allows one quantization step of the last
layer's output scale, because the float Conv / MatMul / Gemm between DequantizeLinear and
QuantizeLinear (QDQ) may sum in another order than ORT's MLAS and so round a value lying on a
half step the other way."""
import os
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ort_case import CaseWriter

rng = np.random.default_rng(29)

NP = {TensorProto.UINT8: np.uint8, TensorProto.INT8: np.int8, TensorProto.UINT16: np.uint16,
      TensorProto.INT16: np.int16, TensorProto.INT32: np.int32, TensorProto.FLOAT: np.float32}


def ir_for(opset):
    return 10 if opset >= 21 else 9 if opset >= 19 else 8


def node_model(op, inputs, outputs, opset, inits=(), **attrs):
    """One node; `inputs` (name, elem type, shape) are graph inputs, `inits` initializers."""
    node = helper.make_node(op, [n for n, _, _ in inputs] + [t.name for t in inits],
                            [n for n, _ in outputs], **attrs)
    g = helper.make_graph([node], op.lower(),
                          [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                          [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
                          list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir_for(opset)
    return m


def ints(dtype, shape):
    info = np.iinfo(NP[dtype])
    return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(NP[dtype])


def weights(dtype, shape):
    """int8 weights multiplied with uint8 activations take 7 bits ([-64, 63]): ONNX Runtime's
    u8 x s8 kernels on AVX2 add pairs of products in int16 with saturation (pmaddubsw), so over
    the full int8 range its reference itself is wrong (inferd's int32 sums are exact); its
    quantizer's reduce_range exists for the same reason."""
    v = ints(dtype, shape)
    return (v // 2).astype(np.int8) if dtype == TensorProto.INT8 else v


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def quantize_cases(w):
    x = f32(2, 3, 4, 5, scale=4.0)
    # Values on exact half steps too (round half to even).
    x.flat[:8] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1000.0, -1000.0]
    for opset in (10, 13, 19, 21):
        for qt in (TensorProto.UINT8, TensorProto.INT8):
            name = "u8" if qt == TensorProto.UINT8 else "s8"
            zp = numpy_helper.from_array(np.array(3 if qt == TensorProto.UINT8 else -2,
                                                  NP[qt]), "zp")
            sc = numpy_helper.from_array(np.array(0.5, np.float32), "scale")
            m = node_model("QuantizeLinear", [("x", TensorProto.FLOAT, x.shape)], [("y", qt)],
                           opset, [sc, zp])
            w.write(f"q_tensor_{name}_op{opset}", m, {"x": x})
            m = node_model("DequantizeLinear", [("x", qt, x.shape)],
                           [("y", TensorProto.FLOAT)], opset, [sc, zp])
            w.write(f"dq_tensor_{name}_op{opset}", m, {"x": ints(qt, x.shape)})
        # No zero point: uint8.
        sc = numpy_helper.from_array(np.array(0.03, np.float32), "scale")
        m = node_model("QuantizeLinear", [("x", TensorProto.FLOAT, x.shape)],
                       [("y", TensorProto.UINT8)], opset, [sc])
        w.write(f"q_nozp_op{opset}", m, {"x": x})
        if opset < 13:
            continue
        for axis in (0, 1, -1):
            d = x.shape[axis]
            for qt in (TensorProto.UINT8, TensorProto.INT8):
                name = "u8" if qt == TensorProto.UINT8 else "s8"
                sc = numpy_helper.from_array(rng.uniform(0.01, 0.2, d).astype(np.float32),
                                             "scale")
                zp = numpy_helper.from_array(ints(qt, (d,)) // 4, "zp")
                m = node_model("QuantizeLinear", [("x", TensorProto.FLOAT, x.shape)],
                               [("y", qt)], opset, [sc, zp], axis=axis)
                w.write(f"q_axis{axis}_{name}_op{opset}", m, {"x": x})
                m = node_model("DequantizeLinear", [("x", qt, x.shape)],
                               [("y", TensorProto.FLOAT)], opset, [sc, zp], axis=axis)
                w.write(f"dq_axis{axis}_{name}_op{opset}", m, {"x": ints(qt, x.shape)})
    # int32 (biases): per tensor and per axis, no zero point.
    b = rng.integers(-2**24, 2**24, size=(16,)).astype(np.int32)
    for opset in (10, 13, 21):
        sc = numpy_helper.from_array(np.array(0.0013, np.float32), "scale")
        m = node_model("DequantizeLinear", [("x", TensorProto.INT32, b.shape)],
                       [("y", TensorProto.FLOAT)], opset, [sc])
        w.write(f"dq_int32_op{opset}", m, {"x": b})
    sc = numpy_helper.from_array(rng.uniform(1e-4, 1e-2, 16).astype(np.float32), "scale")
    m = node_model("DequantizeLinear", [("x", TensorProto.INT32, b.shape)],
                   [("y", TensorProto.FLOAT)], 13, [sc], axis=0)
    w.write("dq_int32_axis", m, {"x": b})
    # Opset 21: 16-bit types, output_dtype, blocked.
    for qt, name in ((TensorProto.UINT16, "u16"), (TensorProto.INT16, "s16")):
        sc = numpy_helper.from_array(np.array(0.001, np.float32), "scale")
        zp = numpy_helper.from_array(np.array(7, NP[qt]), "zp")
        m = node_model("QuantizeLinear", [("x", TensorProto.FLOAT, x.shape)], [("y", qt)], 21,
                       [sc, zp])
        w.write(f"q_{name}_op21", m, {"x": x})
        m = node_model("DequantizeLinear", [("x", qt, x.shape)], [("y", TensorProto.FLOAT)],
                       21, [sc, zp])
        w.write(f"dq_{name}_op21", m, {"x": ints(qt, x.shape)})
    sc = numpy_helper.from_array(np.array(0.05, np.float32), "scale")
    m = node_model("QuantizeLinear", [("x", TensorProto.FLOAT, x.shape)],
                   [("y", TensorProto.INT8)], 21, [sc], output_dtype=TensorProto.INT8)
    w.write("q_output_dtype_op21", m, {"x": x})
    # Blocked: x [6, 10], axis 1 with block 4 (a partial last block), axis 0 with block 2.
    xb = f32(6, 10, scale=3.0)
    for axis, block in ((1, 4), (0, 2), (-1, 3)):
        shape = list(xb.shape)
        a = axis % 2
        shape[a] = -(-shape[a] // block)
        sc = numpy_helper.from_array(rng.uniform(0.01, 0.1, shape).astype(np.float32), "scale")
        zp = numpy_helper.from_array(ints(TensorProto.INT8, shape) // 8, "zp")
        m = node_model("QuantizeLinear", [("x", TensorProto.FLOAT, xb.shape)],
                       [("y", TensorProto.INT8)], 21, [sc, zp], axis=axis, block_size=block)
        try:
            w.write(f"q_blocked_axis{axis}_b{block}", m, {"x": xb})
        except Exception as e:  # noqa: BLE001: a reference ORT cannot give is skipped, said
            print(f"skipped q_blocked_axis{axis}_b{block}: ORT: {str(e)[:120]}")
        m = node_model("DequantizeLinear", [("x", TensorProto.INT8, xb.shape)],
                       [("y", TensorProto.FLOAT)], 21, [sc, zp], axis=axis, block_size=block)
        try:
            w.write(f"dq_blocked_axis{axis}_b{block}", m, {"x": ints(TensorProto.INT8,
                                                                       xb.shape)})
        except Exception as e:  # noqa: BLE001
            print(f"skipped dq_blocked_axis{axis}_b{block}: ORT: {str(e)[:120]}")
    # DynamicQuantizeLinear: mixed signs, all positive, all negative, all zero.
    for name, xv in (("mixed", f32(3, 7, scale=2.0)), ("pos", np.abs(f32(40)) + 0.1),
                     ("neg", -np.abs(f32(5, 5)) - 0.2), ("zero", np.zeros((4,), np.float32))):
        m = node_model("DynamicQuantizeLinear", [("x", TensorProto.FLOAT, xv.shape)],
                       [("y", TensorProto.UINT8), ("y_scale", TensorProto.FLOAT),
                        ("y_zero_point", TensorProto.UINT8)], 11)
        w.write(f"dynamic_quantize_{name}", m, {"x": xv})


def integer_cases(w):
    U8, S8 = TensorProto.UINT8, TensorProto.INT8
    for at, bt in ((U8, U8), (U8, S8), (S8, S8)):
        tag = f"{'u' if at == U8 else 's'}{'u' if bt == U8 else 's'}"
        for a_shape, b_shape in (((5, 17), (17, 9)), ((2, 3, 4, 8), (8, 6)),
                                 ((3, 4, 8), (3, 8, 5)), ((8,), (8, 3))):
            a, b = ints(at, a_shape), (weights if at == U8 else ints)(bt, b_shape)
            n = b_shape[-1]
            azp = numpy_helper.from_array(ints(at, ()), "azp")
            bzp = numpy_helper.from_array(ints(bt, ()), "bzp")
            label = "x".join(map(str, a_shape)) + "_" + "x".join(map(str, b_shape))
            m = node_model("MatMulInteger", [("A", at, a_shape), ("B", bt, b_shape)],
                           [("Y", TensorProto.INT32)], 10, [azp, bzp])
            try:
                w.write(f"matmulinteger_{tag}_{label}", m, {"A": a, "B": b})
            except Exception as e:  # noqa: BLE001
                print(f"skipped matmulinteger_{tag}_{label}: ORT: {str(e)[:120]}")
            if len(b_shape) == 2:  # per-column b zero point
                bzp = numpy_helper.from_array(ints(bt, (n,)), "bzp")
                m = node_model("MatMulInteger", [("A", at, a_shape), ("B", bt, b_shape)],
                               [("Y", TensorProto.INT32)], 10, [azp, bzp])
                try:
                    w.write(f"matmulinteger_{tag}_{label}_percol", m, {"A": a, "B": b})
                except Exception as e:  # noqa: BLE001
                    print(f"skipped matmulinteger_{tag}_{label}_percol: ORT: {str(e)[:120]}")
        m = node_model("MatMulInteger", [("A", at, (4, 6)), ("B", bt, (6, 5))],
                       [("Y", TensorProto.INT32)], 10)
        w.write(f"matmulinteger_{tag}_nozp", m,
                {"A": ints(at, (4, 6)), "B": (weights if at == U8 else ints)(bt, (6, 5))})
    # ConvInteger: ORT supports uint8 x with uint8 / int8 w.
    for wt in (U8, S8):
        tag = "uu" if wt == U8 else "us"
        for name, xs, ws, attrs in (
                ("3x3", (2, 3, 7, 8), (4, 3, 3, 3), {}),
                ("pads_strides", (1, 4, 9, 9), (6, 4, 3, 2),
                 {"pads": [1, 0, 2, 1], "strides": [2, 1]}),
                ("group_dil", (1, 4, 8, 8), (4, 2, 2, 2), {"group": 2, "dilations": [2, 1]}),
                ("same_upper", (1, 2, 6, 5), (3, 2, 3, 3), {"auto_pad": "SAME_UPPER"}),
                ("conv1d", (2, 3, 11), (5, 3, 4), {"strides": [3]})):
            x, wv = ints(U8, xs), ints(wt, ws)
            xzp = numpy_helper.from_array(np.array(rng.integers(0, 255), np.uint8), "xzp")
            wzp = numpy_helper.from_array(ints(wt, ()), "wzp")
            m = node_model("ConvInteger", [("x", U8, xs)], [("y", TensorProto.INT32)], 10,
                           [numpy_helper.from_array(wv, "w"), xzp, wzp], **attrs)
            expected = None
            if wt == S8:  # ORT has no ConvInteger for int8 w: its float Conv, exact here
                expected = [conv_reference(x, wv, xzp, wzp, attrs)]
            w.write(f"convinteger_{tag}_{name}", m, {"x": x}, expected=expected)


def conv_reference(x, wv, xzp, wzp, attrs):
    """ConvInteger's result as ORT's float Conv of (x - x_zp) and (w - w_zp): exact in float32
    while every partial sum stays below 2^24 (asserted)."""
    assert np.prod(wv.shape[1:]) * 255 * 255 < 2**24
    xd = x.astype(np.float32) - float(numpy_helper.to_array(xzp))
    wz = numpy_helper.to_array(wzp).astype(np.float32)
    if wz.ndim == 1:  # per output channel
        wz = wz.reshape((-1,) + (1,) * (wv.ndim - 1))
    wd = wv.astype(np.float32) - wz
    m = node_model("Conv", [("x", TensorProto.FLOAT, xd.shape)], [("y", TensorProto.FLOAT)],
                   11, [numpy_helper.from_array(wd, "w")], **attrs)
    _, (y,) = CaseWriter.reference(None, m, {"x": xd})
    return y.astype(np.int32)


def qlinear_cases(w):
    """QLinearMatMul and QLinearConv, uint8 activations with uint8 / int8 weights, weight scales
    per tensor and per column / channel, with and without bias."""
    U8, S8 = TensorProto.UINT8, TensorProto.INT8
    for wt in (U8, S8):
        tag = "uu" if wt == U8 else "us"
        for per in (False, True):
            a_shape, b_shape = (2, 5, 12), (12, 7)
            n = b_shape[1]
            inits = [numpy_helper.from_array(np.array(0.02, np.float32), "a_scale"),
                     numpy_helper.from_array(np.array(120, np.uint8), "a_zp"),
                     numpy_helper.from_array(weights(wt, b_shape), "b"),
                     numpy_helper.from_array(
                         rng.uniform(0.005, 0.02, n if per else ()).astype(np.float32),
                         "b_scale"),
                     numpy_helper.from_array(np.asarray(ints(wt, (n,) if per else ()) // 16, NP[wt]), "b_zp"),
                     numpy_helper.from_array(np.array(0.05, np.float32), "y_scale"),
                     numpy_helper.from_array(np.array(100, np.uint8), "y_zp")]
            node = helper.make_node("QLinearMatMul", ["a", "a_scale", "a_zp", "b", "b_scale",
                                                      "b_zp", "y_scale", "y_zp"], ["y"])
            g = helper.make_graph([node], "qlm", [helper.make_tensor_value_info("a", U8,
                                                                                a_shape)],
                                  [helper.make_tensor_value_info("y", U8, None)], inits)
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
            m.ir_version = 8
            w.write(f"qlinearmatmul_{tag}{'_percol' if per else ''}", m,
                    {"a": ints(U8, a_shape)})
            for bias in (False, True):
                xs, ws = (2, 4, 9, 8), (6, 2, 3, 3)
                inits = [numpy_helper.from_array(np.array(0.03, np.float32), "x_scale"),
                         numpy_helper.from_array(np.array(128, np.uint8), "x_zp"),
                         numpy_helper.from_array(weights(wt, ws), "w"),
                         numpy_helper.from_array(
                             rng.uniform(0.002, 0.01, 6 if per else ()).astype(np.float32),
                             "w_scale"),
                         numpy_helper.from_array(
                             np.zeros(6 if per else (), NP[wt]) if wt == S8 else
                             ints(wt, (6,) if per else ()), "w_zp"),
                         numpy_helper.from_array(np.array(0.1, np.float32), "y_scale"),
                         numpy_helper.from_array(np.array(90, np.uint8), "y_zp")]
                names = ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp"]
                if bias:
                    inits.append(numpy_helper.from_array(
                        rng.integers(-5000, 5000, 6).astype(np.int32), "B"))
                    names.append("B")
                node = helper.make_node("QLinearConv", names, ["y"], group=2, pads=[1, 1, 0, 1],
                                        strides=[1, 2])
                g = helper.make_graph([node], "qlc", [helper.make_tensor_value_info("x", U8,
                                                                                    xs)],
                                      [helper.make_tensor_value_info("y", U8, None)], inits)
                m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
                m.ir_version = 8
                label = f"qlinearconv_{tag}{'_perch' if per else ''}{'_bias' if bias else ''}"
                try:
                    w.write(label, m, {"x": ints(U8, xs)})
                except Exception as e:  # noqa: BLE001
                    print(f"skipped {label}: ORT: {str(e)[:120]}")


def qlinear_int8_cases(w):
    """QLinearMatMul with int8 a, b and y and nonzero zero points, where results fall outside
    int8 on both sides: they saturate (as the spec and ORT; onnx 1.16's own node tests expect a
    wrap there, see tests/conformance/conformance.cc). First the node tests' data, then seeded
    random operands with b a graph input (the own-code path) or an initializer (the oneDNN
    path), per tensor and per column b_scale / b_zero_point. Its own generator: the other
    cases' data stays as it was."""
    S8 = TensorProto.INT8
    r = np.random.default_rng(61)
    a = np.array([[81, 109, -127, 111], [-124, 87, -128, -98]], np.int8)
    b = np.array([[25, -76, 117], [-67, -101, -128], [-127, 0, 119], [0, 127, 120]], np.int8)
    for name, av, bv, bzp in (("onnx2d", a, b, -13), ("onnx3d", np.stack([a, a]),
                                                          np.stack([b, b]), 114)):
        inits = [numpy_helper.from_array(np.array([0.0066], np.float32), "a_scale"),
                 numpy_helper.from_array(np.array([-14], np.int8), "a_zp"),
                 numpy_helper.from_array(np.array([0.00705], np.float32), "b_scale"),
                 numpy_helper.from_array(np.array([bzp], np.int8), "b_zp"),
                 numpy_helper.from_array(np.array([0.0107], np.float32), "y_scale"),
                 numpy_helper.from_array(np.array([-9], np.int8), "y_zp")]
        node = helper.make_node("QLinearMatMul", ["a", "a_scale", "a_zp", "b", "b_scale", "b_zp",
                                                  "y_scale", "y_zp"], ["y"])
        g = helper.make_graph([node], "qlm8", [helper.make_tensor_value_info("a", S8, av.shape),
                                               helper.make_tensor_value_info("b", S8, bv.shape)],
                              [helper.make_tensor_value_info("y", S8, None)], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
        m.ir_version = 10
        w.write(f"qlinearmatmul_ss_{name}", m, {"a": av, "b": bv})
    for const_b in (False, True):
        for per in (False, True):
            a_shape, b_shape = (2, 5, 12), (12, 7)
            n = b_shape[1]
            bv = r.integers(-64, 63, size=b_shape, endpoint=True).astype(np.int8)  # weights()
            inits = [numpy_helper.from_array(np.array(0.02, np.float32), "a_scale"),
                     numpy_helper.from_array(np.array(-20, np.int8), "a_zp"),
                     numpy_helper.from_array(
                         r.uniform(0.005, 0.02, n if per else ()).astype(np.float32),
                         "b_scale"),
                     numpy_helper.from_array(
                         np.asarray(r.integers(-30, 30, n if per else ()), np.int8), "b_zp"),
                     # A small y_scale: many results land outside [-128, 127].
                     numpy_helper.from_array(np.array(0.01, np.float32), "y_scale"),
                     numpy_helper.from_array(np.array(7, np.int8), "y_zp")]
            inputs = [helper.make_tensor_value_info("a", S8, a_shape)]
            feeds = {"a": r.integers(-128, 127, size=a_shape, endpoint=True).astype(np.int8)}
            if const_b:
                inits.append(numpy_helper.from_array(bv, "b"))
            else:
                inputs.append(helper.make_tensor_value_info("b", S8, b_shape))
                feeds["b"] = bv
            node = helper.make_node("QLinearMatMul", ["a", "a_scale", "a_zp", "b", "b_scale",
                                                      "b_zp", "y_scale", "y_zp"], ["y"])
            g = helper.make_graph([node], "qlm8", inputs,
                                  [helper.make_tensor_value_info("y", S8, None)], inits)
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
            m.ir_version = 8
            w.write(f"qlinearmatmul_ss{'_constb' if const_b else ''}{'_percol' if per else ''}",
                    m, feeds)


def ms_model(op, inputs, inits, out_type, **attrs):
    """One com.microsoft node; `inputs` (name, type, shape) graph inputs, then initializers; the
    node's inputs are `order` (names, "" for absent)."""
    order = attrs.pop("order")
    node = helper.make_node(op, order, ["y"], domain="com.microsoft", **attrs)
    g = helper.make_graph([node], op.lower(),
                          [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                          [helper.make_tensor_value_info("y", out_type, None)], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m


def contrib_cases(w):
    """com.microsoft QLinearAdd / QLinearMul (broadcasting; ORT's fixed-point vector kernels may
    round a half step the other way: atol 1), QLinearSigmoid (atol 1) / QLinearLeakyRelu (exact)
    tables, QLinearGlobalAveragePool (NCHW and channels_last; atol 1), MatMulIntegerToFloat and
    DynamicQuantizeMatMul (float outputs)."""
    U8, S8 = TensorProto.UINT8, TensorProto.INT8
    for qt in (U8, S8):
        tag = "u8" if qt == U8 else "s8"
        zp = lambda name, v: numpy_helper.from_array(np.array(v, NP[qt]), name)  # noqa: E731
        sc = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)  # noqa: E731
        for op in ("QLinearAdd", "QLinearMul"):
            for a_shape, b_shape in (((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)),
                                     ((3, 1, 5), (1, 4, 1))):
                inits = [sc("as", 0.05), zp("az", 10 if qt == U8 else -3), sc("bs", 0.03),
                         zp("bz", 130 if qt == U8 else 5), sc("cs", 0.08 if op == "QLinearAdd"
                                                             else 0.5),
                         zp("cz", 120 if qt == U8 else 2)]
                m = ms_model(op, [("a", qt, a_shape), ("b", qt, b_shape)], inits, qt,
                             order=["a", "as", "az", "b", "bs", "bz", "cs", "cz"])
                label = "x".join(map(str, a_shape)) + "_" + "x".join(map(str, b_shape))
                w.write(f"{op.lower()}_{tag}_{label}", m,
                        {"a": ints(qt, a_shape), "b": ints(qt, b_shape)}, rtol=0, atol=1)
        for op, attrs in (("QLinearSigmoid", {}), ("QLinearLeakyRelu", {"alpha": 0.1})):
            inits = [sc("xs", 0.05), zp("xz", 128 if qt == U8 else 0), sc("ys", 1.0 / 256 if
                                                                       op == "QLinearSigmoid"
                                                                       else 0.04),
                     zp("yz", 0 if qt == U8 else -128)]
            m = ms_model(op, [("x", qt, (3, 50))], inits, qt, order=["x", "xs", "xz", "ys", "yz"],
                         **attrs)
            # Sigmoid: ORT's MLAS logistic is a polynomial, std::exp here: a table entry on a
            # half step may round the other way (atol 1); LeakyRelu is exact.
            w.write(f"{op.lower()}_{tag}", m, {"x": ints(qt, (3, 50))}, rtol=0,
                    atol=1 if op == "QLinearSigmoid" else 1e-5)
        for per in (False, True):
            n = 6
            bs = rng.uniform(0.01, 0.05, (n,) if per else ()).astype(np.float32)
            inits = [numpy_helper.from_array(weights(S8, (8, n)), "b"), sc("as", 0.03),
                     numpy_helper.from_array(bs, "bs"), zp("az", 7),
                     numpy_helper.from_array(np.asarray(ints(S8, (n,) if per else ()) // 8,
                                                        np.int8), "bz"),
                     numpy_helper.from_array(f32(n), "bias")]
            m = ms_model("MatMulIntegerToFloat", [("a", qt, (2, 3, 8))], inits,
                         TensorProto.FLOAT, order=["a", "b", "as", "bs", "az", "bz", "bias"])
            w.write(f"matmulintegertofloat_{tag}{'_percol' if per else ''}", m,
                    {"a": ints(qt, (2, 3, 8))})
            if qt == U8:
                inits = [numpy_helper.from_array(weights(S8, (8, n)), "b"),
                         numpy_helper.from_array(bs, "bs"),
                         numpy_helper.from_array(np.asarray(ints(S8, (n,) if per else ()) // 8,
                                                            np.int8), "bz"),
                         numpy_helper.from_array(f32(n), "bias")]
                m = ms_model("DynamicQuantizeMatMul", [("a", TensorProto.FLOAT, (5, 8))], inits,
                             TensorProto.FLOAT, order=["a", "b", "bs", "bz", "bias"])
                w.write(f"dynamicquantizematmul{'_percol' if per else ''}", m,
                        {"a": f32(5, 8, scale=2.0)})
        # QLinearConcat: inputs with their own scales and zero points (one equal to Y's: copied).
        for axis, shapes in ((1, [(2, 3, 4), (2, 5, 4), (2, 1, 4)]), (-1, [(3, 2), (3, 6)])):
            y_zp = 120 if qt == U8 else -4
            inits = [sc("ys", 0.04), zp("yz", y_zp)]
            order, inputs, feeds = ["ys", "yz"], [], {}
            for i, shape in enumerate(shapes):
                same = i == 0
                inits += [sc(f"s{i}", 0.04 if same else 0.015 * (i + 1)),
                          zp(f"z{i}", y_zp if same else (90 + 20 * i if qt == U8 else 3 * i))]
                order += [f"x{i}", f"s{i}", f"z{i}"]
                inputs.append((f"x{i}", qt, shape))
                feeds[f"x{i}"] = ints(qt, shape)
            m = ms_model("QLinearConcat", inputs, inits, qt, order=order, axis=axis)
            w.write(f"qlinearconcat_{tag}_axis{axis}", m, feeds, rtol=0, atol=1)
        for last, shape in ((0, (2, 3, 5, 4)), (1, (2, 5, 4, 3))):
            inits = [sc("xs", 0.05), zp("xz", 100 if qt == U8 else -7), sc("ys", 0.02),
                     zp("yz", 110 if qt == U8 else 3)]
            m = ms_model("QLinearGlobalAveragePool", [("x", qt, shape)], inits, qt,
                         order=["x", "xs", "xz", "ys", "yz"], channels_last=last)
            w.write(f"qlinearglobalaveragepool_{tag}_cl{last}", m, {"x": ints(qt, shape)},
                    rtol=0, atol=1)


def qgemm_cases(w):
    """com.microsoft QGemm: u8 x s8, u8 x u8, s8 x s8; transA / transB; b_scale and b_zero_point
    per tensor and per column; the int32 C absent, [N], scalar, [M, 1], [M, N]; alpha; a
    constant B (prepacked) and a B fed at run time; Y quantized (uint8 / int8 y_zero_point) or
    float32 (no y_scale). Exact: the int32 sums are exact on both sides and the multiplier
    alpha * a_scale * b_scale[n] / y_scale is formed in the same order."""
    U8, S8 = TensorProto.UINT8, TensorProto.INT8
    F = numpy_helper.from_array
    m_, k_, n_ = 5, 24, 7
    cases = [  # (at, bt, transA, transB, per column, C shape, alpha, out, B constant)
        (U8, S8, 0, 1, False, (n_,), 1.0, U8, True),
        (U8, S8, 0, 0, True, None, 1.0, U8, True),
        (U8, S8, 1, 1, True, (m_, n_), 0.5, U8, True),
        (U8, S8, 0, 1, True, (n_,), 1.0, None, True),
        (U8, S8, 1, 0, False, (), 2.0, None, False),
        (U8, U8, 0, 1, False, (m_, 1), 1.0, U8, True),
        (U8, U8, 0, 0, True, (n_,), 1.0, U8, False),
        (U8, U8, 0, 1, True, None, 1.0, None, True),
        (S8, S8, 0, 1, False, (1, n_), 1.0, S8, True),
        (S8, S8, 1, 1, True, (n_,), 1.0, S8, False),
        (S8, S8, 0, 0, True, (m_, n_), 1.0, None, True),
    ]
    for at, bt, ta, tb, per, c_shape, alpha, out, const_b in cases:
        a_shape = (k_, m_) if ta else (m_, k_)
        b_shape = (n_, k_) if tb else (k_, n_)
        b = (weights if at == U8 else ints)(bt, b_shape)
        cols = (n_,) if per else ()
        b_scale = rng.uniform(0.002, 0.01, cols).astype(np.float32)
        if bt == S8:
            b_zp = np.asarray(ints(S8, cols) // 16, np.int8)
        else:
            b_zp = np.asarray(rng.integers(100, 156, cols), np.uint8)
        a_zp = np.array(rng.integers(0, 255) if at == U8 else rng.integers(-20, 20), NP[at])
        inits = [F(np.array(0.05, np.float32), "as"), F(a_zp, "az"), F(b_scale, "bs"),
                 F(b_zp, "bz")]
        inputs = [("a", at, a_shape)]
        feeds = {"a": ints(at, a_shape)}
        if const_b:
            inits.append(F(b, "b"))
        else:
            inputs.append(("b", bt, b_shape))
            feeds["b"] = b
        order = ["a", "as", "az", "b", "bs", "bz"]
        if c_shape is not None:
            inits.append(F(rng.integers(-5000, 5000, c_shape).astype(np.int32), "c"))
            order.append("c")
        elif out is not None:
            order.append("")
        if out is not None:
            inits += [F(np.array(0.3, np.float32), "ys"),
                      F(np.array(128 if out == U8 else -5, NP[out]), "yz")]
            order += ["ys", "yz"]
        m = ms_model("QGemm", inputs, inits, TensorProto.FLOAT if out is None else out,
                     order=order, alpha=alpha, transA=ta, transB=tb)
        c_tag = "none" if c_shape is None else "x".join(map(str, c_shape)) or "scalar"
        out_tag = "float" if out is None else "u8" if out == U8 else "s8"
        tag = (f"{'u' if at == U8 else 's'}{'u' if bt == U8 else 's'}_t{ta}{tb}"
               f"{'_percol' if per else ''}_c{c_tag}{'' if alpha == 1.0 else '_alpha'}_{out_tag}"
               f"{'' if const_b else '_bfed'}")
        w.write(f"qgemm_{tag}", m, feeds, rtol=1e-6, atol=1e-6)


def softmax_pool_cases(w):
    """com.microsoft QLinearSoftmax (opset 13: along `axis`, last and middle; opset 12: the
    [outer, rest] rows) and QLinearAveragePool (2-D NCHW and channels_last, pads with and
    without count_include_pad, ceil_mode, strides, 1-D, SAME_UPPER), uint8 and int8. Tolerance:
    one step (ORT's softmax table and pool sums round differently). ORT's int8 softmax does not
    saturate: a result above 127 wraps (256 steps of 1/256 with zero point -128 become -128),
    where inferd saturates. So the int8 cases keep every result in range (probabilities below
    255.5 steps at y_scale 1/256; y_scale 0.004 instead of 0.002); the uint8 ones saturate."""
    U8, S8 = TensorProto.UINT8, TensorProto.INT8
    for qt in (U8, S8):
        tag = "u8" if qt == U8 else "s8"
        zp = lambda name, v: numpy_helper.from_array(np.array(v, NP[qt]), name)  # noqa: E731
        sc = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)  # noqa: E731
        for opset, axis, shape, xs, ys in ((13, -1, (3, 10), 0.02, 1.0 / 256),
                                           (13, 1, (2, 5, 4), 0.02, 1.0 / 256),
                                           (12, 1, (2, 3, 4), 0.02, 1.0 / 256),
                                           (13, -1, (4, 33), 0.08,
                                            0.002 if qt == U8 else 0.004)):
            inits = [sc("xs", xs), zp("xz", 120 if qt == U8 else -3), sc("ys", ys),
                     zp("yz", 0 if qt == U8 else -128)]
            m = ms_model("QLinearSoftmax", [("x", qt, shape)], inits, qt,
                         order=["x", "xs", "xz", "ys", "yz"], axis=axis, opset=opset)
            label = "x".join(map(str, shape))
            w.write(f"qlinearsoftmax_{tag}_op{opset}_axis{axis}_{label}", m,
                    {"x": ints(qt, shape)}, rtol=0, atol=1)
        for name, shape, attrs in (
                ("k3s2p1", (2, 3, 9, 8), dict(kernel_shape=[3, 3], strides=[2, 2],
                                              pads=[1, 1, 1, 1])),
                ("k3s2p1_incl", (2, 3, 9, 8), dict(kernel_shape=[3, 3], strides=[2, 2],
                                                   pads=[1, 1, 1, 1], count_include_pad=1)),
                ("k2_ceil", (1, 4, 7, 7), dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)),
                ("k3_ceil_incl", (1, 2, 8, 6), dict(kernel_shape=[3, 2], strides=[2, 2],
                                                    pads=[1, 0, 1, 1], ceil_mode=1,
                                                    count_include_pad=1)),
                ("k3s2p1_nhwc", (2, 9, 8, 5), dict(kernel_shape=[3, 3], strides=[2, 2],
                                                   pads=[1, 1, 1, 1], channels_last=1)),
                ("same_upper", (1, 3, 7, 6), dict(kernel_shape=[3, 3], strides=[2, 2],
                                                  auto_pad="SAME_UPPER")),
                ("1d", (2, 3, 11), dict(kernel_shape=[4], strides=[3], pads=[2, 1]))):
            inits = [sc("xs", 0.05), zp("xz", 100 if qt == U8 else -7), sc("ys", 0.03),
                     zp("yz", 110 if qt == U8 else 3)]
            m = ms_model("QLinearAveragePool", [("x", qt, shape)], inits, qt,
                         order=["x", "xs", "xz", "ys", "yz"], **attrs)
            w.write(f"qlinearaveragepool_{tag}_{name}", m, {"x": ints(qt, shape)}, rtol=0, atol=1)


def float_mlp():
    """x [4, 16] -> MatMul 16x32 + Add -> Relu -> Gemm 32x10 (transB) -> y."""
    w1 = numpy_helper.from_array(f32(16, 32, scale=0.3), "w1")
    b1 = numpy_helper.from_array(f32(32, scale=0.1), "b1")
    w2 = numpy_helper.from_array(f32(10, 32, scale=0.3), "w2")
    b2 = numpy_helper.from_array(f32(10, scale=0.1), "b2")
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"]),
             helper.make_node("Add", ["h0", "b1"], ["h1"]),
             helper.make_node("Relu", ["h1"], ["h2"]),
             helper.make_node("Gemm", ["h2", "w2", "b2"], ["y"], transB=1)]
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                       [4, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 10])],
                          [w1, b1, w2, b2])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m, (4, 16)


def float_cnn():
    """x [1, 3, 12, 12] -> Conv 8x3x3x3 pad 1 -> Relu -> MaxPool 2 -> Conv 8x8x3x3 -> Relu ->
    GlobalAveragePool -> Flatten -> MatMul 8x5 -> y."""
    c1 = numpy_helper.from_array(f32(8, 3, 3, 3, scale=0.4), "c1")
    c1b = numpy_helper.from_array(f32(8, scale=0.1), "c1b")
    c2 = numpy_helper.from_array(f32(8, 8, 3, 3, scale=0.2), "c2")
    c2b = numpy_helper.from_array(f32(8, scale=0.1), "c2b")
    fc = numpy_helper.from_array(f32(8, 5, scale=0.5), "fc")
    nodes = [helper.make_node("Conv", ["x", "c1", "c1b"], ["a1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a1"], ["a2"]),
             helper.make_node("MaxPool", ["a2"], ["a3"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["a3", "c2", "c2b"], ["a4"]),
             helper.make_node("Relu", ["a4"], ["a5"]),
             helper.make_node("GlobalAveragePool", ["a5"], ["a6"]),
             helper.make_node("Flatten", ["a6"], ["a7"]),
             helper.make_node("MatMul", ["a7", "fc"], ["y"])]
    g = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                       [1, 3, 12, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
                          [c1, c1b, c2, c2b, fc])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m, (1, 3, 12, 12)


class Reader:
    """quantize_static's calibration data: a few seeded batches."""

    def __init__(self, shape, n=8):
        self.batches = [{"x": f32(*shape)} for _ in range(n)]

    def get_next(self):
        return self.batches.pop() if self.batches else None


def output_tolerance(q):
    """(rtol, atol) for a quantized model's float output. Where a DequantizeLinear makes it
    (QDQ), one step of its scale: the float Conv / MatMul / Gemm before the last QuantizeLinear
    may sum in another order than ORT's and round a value on a half step the other way. Else
    (dynamic: exact integer products, then the same float Mul / Add as ORT) float rounding."""
    inits = {t.name: numpy_helper.to_array(t) for t in q.graph.initializer}
    for n in q.graph.node:
        if q.graph.output[0].name in n.output and n.op_type == "DequantizeLinear":
            return 0.0, 1.01 * float(np.max(inits[n.input[1]]))
    return 1e-5, 1e-5


def model_cases(w):
    from onnxruntime.quantization import (CalibrationMethod, QuantFormat, QuantType,
                                          quantize_dynamic, quantize_static)
    tmp = tempfile.mkdtemp()
    for name, (model, shape) in (("mlp", float_mlp()), ("cnn", float_cnn())):
        src = os.path.join(tmp, f"{name}.onnx")
        onnx.save(model, src)
        x = f32(*shape)
        variants = [("dynamic_u8", lambda d: quantize_dynamic(src, d,
                                                              weight_type=QuantType.QUInt8)),
                    ("dynamic_s8", lambda d: quantize_dynamic(src, d,
                                                              weight_type=QuantType.QInt8)),
                    ("dynamic_s8_perchannel",
                     lambda d: quantize_dynamic(src, d, weight_type=QuantType.QInt8,
                                                per_channel=True, reduce_range=True)),
                    ("qdq", lambda d: quantize_static(
                        src, d, Reader(shape), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        calibrate_method=CalibrationMethod.MinMax)),
                    ("qdq_perchannel", lambda d: quantize_static(
                        src, d, Reader(shape), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)),
                    ("qdq_u8u8", lambda d: quantize_static(
                        src, d, Reader(shape), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QUInt8)),
                    # QOperator: the MLP's Gemm becomes com.microsoft QGemm.
                    ("qoperator", lambda d: quantize_static(
                        src, d, Reader(shape), quant_format=QuantFormat.QOperator,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)),
                    ("qoperator_perchannel", lambda d: quantize_static(
                        src, d, Reader(shape), quant_format=QuantFormat.QOperator,
                        per_channel=True, reduce_range=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8))]

        for variant, make in variants:
            dst = os.path.join(tmp, f"{name}_{variant}.onnx")
            make(dst)
            q = onnx.load(dst)
            ops = sorted({n.op_type for n in q.graph.node})
            print(f"{name}_{variant}: {', '.join(ops)}")
            if variant.startswith("dynamic") and name == "mlp":
                # ORT's optimizer rewrites the dynamic form into com.microsoft
                # DynamicQuantizeMatMul / MatMulIntegerToFloat: that saved model too.
                import onnxruntime as ort
                so = ort.SessionOptions()
                so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
                so.optimized_model_filepath = dst + ".opt.onnx"
                ort.InferenceSession(dst, so, providers=["CPUExecutionProvider"])
                opt = onnx.load(dst + ".opt.onnx")
                print(f"{name}_{variant}_ortopt: "
                      f"{', '.join(sorted({n.op_type for n in opt.graph.node}))}")
                w.write(f"model_{name}_{variant}_ortopt", opt, {"x": x}, rtol=1e-5, atol=1e-5)
            rtol, atol = output_tolerance(q)
            try:
                w.write(f"model_{name}_{variant}", q, {"x": x}, rtol=rtol, atol=atol)
            except Exception as e:  # noqa: BLE001: ORT cannot run it (int8 ConvInteger)
                print(f"skipped model_{name}_{variant}: ORT: {str(e)[:120]}")


def onednn_cases(w):
    """The oneDNN int8 paths: MatMulInteger with a constant B (prepacked; uint8 and int8 B;
    scalar, per-column and absent zero points; a row zero point; batch > 1, a batched B) and
    ConvInteger with constant weights (per-channel zero point, batch 2) plus the own-code 2-D
    depthwise path (pads, strides)."""
    U8, S8 = TensorProto.UINT8, TensorProto.INT8
    for at, bt in ((U8, S8), (U8, U8), (S8, S8)):
        tag = f"{'u' if at == U8 else 's'}{'u' if bt == U8 else 's'}"
        for a_shape, b_shape in (((2, 3, 40), (40, 33)), ((3, 4, 20), (3, 20, 7)),
                                 ((1, 70), (70, 130))):
            k, n = b_shape[-2], b_shape[-1]
            label = "x".join(map(str, a_shape)) + "_" + "x".join(map(str, b_shape))
            b = numpy_helper.from_array((weights if at == U8 else ints)(bt, b_shape), "B")
            for zp in ("scalar", "percol", "none", "perrow"):
                if zp != "scalar" and len(b_shape) != 2:
                    continue
                inits = [b]
                names = ["A", "B"]
                if zp != "none":
                    m_rows = a_shape[-2]
                    azp = ints(at, (m_rows,) if zp == "perrow" else ())
                    inits.append(numpy_helper.from_array(azp, "azp"))
                    inits.append(numpy_helper.from_array(ints(bt, (n,) if zp == "percol" else ()),
                                                         "bzp"))
                    names += ["azp", "bzp"]
                node = helper.make_node("MatMulInteger", names, ["Y"])
                g = helper.make_graph([node], "mmi", [helper.make_tensor_value_info("A", at,
                                                                                    a_shape)],
                                      [helper.make_tensor_value_info("Y", TensorProto.INT32,
                                                                     None)], inits)
                m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 10)])
                m.ir_version = 8
                name = f"onednn_matmulinteger_{tag}_{label}_{zp}"
                a = ints(at, a_shape)
                expected = None
                if zp == "perrow":  # ORT refuses a row zero point: exact int64 sums, wrapped
                    bv = numpy_helper.to_array(b).astype(np.int64)
                    ad = a.astype(np.int64) - azp.astype(np.int64).reshape(-1, 1)
                    bd = bv - numpy_helper.to_array(inits[2]).astype(np.int64)
                    expected = [(ad @ bd).astype(np.int32)]
                try:
                    w.write(name, m, {"A": a}, expected=expected)
                except Exception as e:  # noqa: BLE001
                    print(f"skipped {name}: ORT: {str(e)[:120]}")
    for wt in (U8, S8):
        tag = "uu" if wt == U8 else "us"
        for name, xs, ws, attrs, per in (
                ("perch_batch2", (2, 8, 6, 7), (16, 8, 3, 3), {"pads": [1, 1, 1, 1]}, True),
                ("1x1", (1, 24, 5, 5), (12, 24, 1, 1), {}, False),
                ("depthwise", (2, 6, 9, 8), (6, 1, 3, 3),
                 {"group": 6, "pads": [1, 0, 1, 2], "strides": [2, 1]}, True)):
            x, wv = ints(U8, xs), weights(wt, ws)
            xzp = numpy_helper.from_array(np.array(rng.integers(0, 255), np.uint8), "xzp")
            wzp = numpy_helper.from_array(
                np.asarray(ints(wt, (ws[0],) if per else ()) // 4, NP[wt]), "wzp")
            m = node_model("ConvInteger", [("x", U8, xs)], [("y", TensorProto.INT32)], 10,
                           [numpy_helper.from_array(wv, "w"), xzp, wzp], **attrs)
            expected = None
            if wt == S8 or per:  # ORT: uint8 w only, per-tensor zero point only
                expected = [conv_reference(x, wv, xzp, wzp, attrs)]
            w.write(f"onednn_convinteger_{tag}_{name}", m, {"x": x}, expected=expected)


def direct_conv_cases(w):
    """The direct oneDNN int8 convolution (kernels/cpu/int8_conv_primitive.h): QLinearConv with
    int8 weights and zero point 0, requantized by oneDNN (uint8 x / y and int8 x / y; depthwise,
    grouped, strides, pads, dilations, 1-D, 3-D; scale per tensor and per channel; with and without
    B; batch 2), within one step of ONNX Runtime (oneDNN rounds acc * scale + zero point, which
    can differ on exact halves); and ConvInteger with uint8 weights whose zero point makes the
    weights' zero-point correction run (int32, exact)."""
    U8, S8 = TensorProto.UINT8, TensorProto.INT8
    shapes = (  # name, x, w, attrs
        ("3x3_pad", (1, 16, 10, 9), (24, 16, 3, 3), {"pads": [1, 1, 1, 1]}),
        ("depthwise_s2", (1, 32, 11, 11), (32, 1, 3, 3),
         {"group": 32, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
        ("depthwise_dil", (2, 24, 9, 10), (24, 1, 3, 3),
         {"group": 24, "pads": [2, 1, 2, 0], "dilations": [2, 1]}),
        ("grouped", (1, 12, 8, 8), (18, 4, 3, 2), {"group": 3, "pads": [0, 1, 1, 0]}),
        ("1x1_batch2", (2, 40, 6, 7), (48, 40, 1, 1), {}),
        ("strided_5x5", (1, 8, 15, 13), (16, 8, 5, 5), {"strides": [2, 3], "pads": [2, 2, 1, 0]}),
        ("conv1d", (2, 10, 17), (12, 10, 3), {"strides": [2], "pads": [1, 1]}),
        ("1x1_s2", (1, 16, 8, 8), (32, 16, 1, 1), {"strides": [2, 2]}),
        ("conv3d", (1, 4, 5, 6, 7), (8, 4, 3, 3, 3), {"pads": [1, 1, 1, 1, 1, 1]}))
    for xt in (U8, S8):
        for name, xs, ws, attrs in shapes:
            for per in (False, True):
                for bias in (False, True):
                    m_out = ws[0]
                    xzp = np.array(128 if xt == U8 else 3, NP[xt])
                    yzp = np.array(100 if xt == U8 else -7, NP[xt])
                    inits = [numpy_helper.from_array(np.array(0.03, np.float32), "x_scale"),
                             numpy_helper.from_array(xzp, "x_zp"),
                             numpy_helper.from_array(weights(S8, ws), "w"),
                             numpy_helper.from_array(
                                 rng.uniform(0.002, 0.01, m_out if per else ()).astype(
                                     np.float32), "w_scale"),
                             numpy_helper.from_array(np.zeros(m_out if per else (), np.int8),
                                                     "w_zp"),
                             numpy_helper.from_array(np.array(0.1, np.float32), "y_scale"),
                             numpy_helper.from_array(yzp, "y_zp")]
                    names = ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp"]
                    if bias:
                        inits.append(numpy_helper.from_array(
                            rng.integers(-5000, 5000, m_out).astype(np.int32), "B"))
                        names.append("B")
                    node = helper.make_node("QLinearConv", names, ["y"], **attrs)
                    g = helper.make_graph([node], "qlc",
                                          [helper.make_tensor_value_info("x", xt, xs)],
                                          [helper.make_tensor_value_info("y", xt, None)], inits)
                    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
                    m.ir_version = 8
                    label = (f"direct_qlinearconv_{'u8' if xt == U8 else 's8'}_{name}"
                             f"{'_perch' if per else ''}{'_bias' if bias else ''}")
                    try:
                        w.write(label, m, {"x": ints(xt, xs)}, rtol=0, atol=1)
                    except Exception as e:  # noqa: BLE001
                        print(f"skipped {label}: ORT: {str(e)[:120]}")
    # ConvInteger, uint8 weights over their whole range with a zero point far from 128 (as
    # quantize_dynamic writes them): the window-sum correction, exact.
    for name, xs, ws, attrs in shapes[:5]:
        x, wv = ints(U8, xs), ints(U8, ws)
        wv.flat[0], wv.flat[1] = 0, 255
        for zx, zw in ((131, 17), (0, 200)):
            xzp = numpy_helper.from_array(np.array(zx, np.uint8), "xzp")
            wzp = numpy_helper.from_array(np.array(zw, np.uint8), "wzp")
            m = node_model("ConvInteger", [("x", U8, xs)], [("y", TensorProto.INT32)], 10,
                           [numpy_helper.from_array(wv, "w"), xzp, wzp], **attrs)
            w.write(f"direct_convinteger_uu_{name}_zw{zw}", m, {"x": x},
                    expected=[conv_reference(x, wv, xzp, wzp, attrs)])


def qdq_graph(nodes, inits, x_shape, opset=13):
    g = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                       x_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def qdq_fusion_cases(w):
    """Hand-built QDQ groups that inferd fuses at load (engine/rewrites.cc): Q(x) -> DQ, DQ of a
    constant W -> MatMul / Conv -> Q -> DQ -> y, per-tensor and per-channel W, uint8 and int8 W,
    batch > 1; MatMul without the trailing Q (float output); Conv with an int32 bias. Tolerance:
    one step of the output scale (ORT runs them unfused here and requantizes float sums)."""
    U8, S8 = TensorProto.UINT8, TensorProto.INT8
    F = numpy_helper.from_array
    for wt in (S8, U8):
        wtag = "s8" if wt == S8 else "u8"
        for per in (False, True):
            for x_shape, (k, n) in (((2, 3, 16), (16, 24)), ((5, 32), (32, 8))):
                wq = weights(wt, (k, n))
                ws = rng.uniform(0.005, 0.02, n if per else ()).astype(np.float32)
                wzp = (np.zeros(n if per else (), np.int8) if wt == S8 else
                       np.asarray(ints(wt, (n,) if per else ()) // 4 + 64, np.uint8))
                for requant in (True, False):
                    inits = [F(np.array(0.02, np.float32), "xs"), F(np.array(128, np.uint8), "xz"),
                             F(wq, "wq"), F(ws, "ws"), F(wzp, "wz"),
                             F(np.array(0.05, np.float32), "ys"), F(np.array(110, np.uint8), "yz")]
                    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
                             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
                             helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"],
                                              axis=1)]
                    if requant:
                        nodes += [helper.make_node("MatMul", ["xd", "wd"], ["h"]),
                                  helper.make_node("QuantizeLinear", ["h", "ys", "yz"], ["hq"]),
                                  helper.make_node("DequantizeLinear", ["hq", "ys", "yz"], ["y"])]
                        tol = dict(rtol=0.0, atol=1.01 * 0.05)
                    else:
                        nodes.append(helper.make_node("MatMul", ["xd", "wd"], ["y"]))
                        tol = dict(rtol=1e-4, atol=1e-4)
                    m = qdq_graph(nodes, inits, x_shape)
                    label = (f"qdq_matmul_{wtag}{'_perch' if per else ''}_"
                             f"{'x'.join(map(str, x_shape))}{'' if requant else '_float'}")
                    w.write(label, m, {"x": f32(*x_shape)}, **tol)
        for per in (False, True):
            for bias in (False, True):
                xs_shape, w_shape = (2, 4, 9, 8), (8, 4, 3, 3)
                mo = w_shape[0]
                wq = weights(wt, w_shape)
                ws = rng.uniform(0.005, 0.02, mo if per else ()).astype(np.float32)
                wzp = (np.zeros(mo if per else (), np.int8) if wt == S8 else
                       np.asarray(ints(wt, (mo,) if per else ()) // 4 + 64, np.uint8))
                inits = [F(np.array(0.02, np.float32), "xs"), F(np.array(128, np.uint8), "xz"),
                         F(wq, "wq"), F(ws, "ws"), F(wzp, "wz"),
                         F(np.array(0.1, np.float32), "ys"), F(np.array(100, np.uint8), "yz")]
                nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
                         helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
                         helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"],
                                          axis=0)]
                conv_in = ["xd", "wd"]
                if bias:
                    bs = (np.float32(0.02) * ws).astype(np.float32)
                    inits += [F(rng.integers(-3000, 3000, mo).astype(np.int32), "bq"),
                              F(bs if per else np.array(bs, np.float32), "bs"),
                              F(np.zeros(mo if per else (), np.int32), "bz")]
                    nodes.append(helper.make_node("DequantizeLinear", ["bq", "bs", "bz"], ["bd"],
                                                  axis=0))
                    conv_in.append("bd")
                nodes += [helper.make_node("Conv", conv_in, ["h"], pads=[1, 1, 0, 1],
                                           strides=[1, 2]),
                          helper.make_node("QuantizeLinear", ["h", "ys", "yz"], ["hq"]),
                          helper.make_node("DequantizeLinear", ["hq", "ys", "yz"], ["y"])]
                m = qdq_graph(nodes, inits, xs_shape)
                label = f"qdq_conv_{wtag}{'_perch' if per else ''}{'_bias' if bias else ''}"
                w.write(label, m, {"x": f32(*xs_shape)}, rtol=0.0, atol=1.01 * 0.1)


def qdq_gemm_cases(w):
    """DQ(x) and DQ(constant W) -> Gemm [with DQ(int32 bias)] [-> Q], which inferd fuses into
    com.microsoft QGemm: transB 1 (a Linear layer, W [N, K], per channel on axis 0) and 0 (W
    [K, N], axis 1), per tensor and per channel, int8 and uint8 W, with and without the bias (an
    int32 DequantizeLinear, or a float constant: QGemm then Add) and the QuantizeLinear (float
    output). Tolerance: one output step (ORT runs them unfused)."""
    U8, S8 = TensorProto.UINT8, TensorProto.INT8
    F = numpy_helper.from_array
    m_, k_, n_ = 5, 32, 8
    for wt, tb, per, bias, requant in ((S8, 1, False, True, True), (S8, 1, True, True, True),
                                       (S8, 0, True, False, True), (U8, 1, True, True, True),
                                       (S8, 1, True, True, False), (U8, 0, False, False, False),
                                       (S8, 1, True, "float", False),
                                       (U8, 0, False, "float", True)):
        wq = weights(wt, (n_, k_) if tb else (k_, n_))
        ws = rng.uniform(0.005, 0.02, n_ if per else ()).astype(np.float32)
        wzp = (np.zeros(n_ if per else (), np.int8) if wt == S8 else
               np.asarray(ints(wt, (n_,) if per else ()) // 4 + 64, np.uint8))
        inits = [F(np.array(0.02, np.float32), "xs"), F(np.array(128, np.uint8), "xz"),
                 F(wq, "wq"), F(ws, "ws"), F(wzp, "wz"),
                 F(np.array(0.05, np.float32), "ys"), F(np.array(110, np.uint8), "yz")]
        nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
                 helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
                 helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"],
                                  axis=0 if tb else 1)]
        gemm_in = ["xd", "wd"]
        if bias == "float":
            inits.append(F(f32(n_, scale=0.5), "bf"))
            gemm_in.append("bf")
        elif bias:
            bs = (np.float32(0.02) * ws).astype(np.float32)
            inits += [F(rng.integers(-3000, 3000, n_).astype(np.int32), "bq"),
                      F(bs if per else np.array(bs, np.float32), "bs"),
                      F(np.zeros(n_ if per else (), np.int32), "bz")]
            nodes.append(helper.make_node("DequantizeLinear", ["bq", "bs", "bz"], ["bd"], axis=0))
            gemm_in.append("bd")
        if requant:
            nodes += [helper.make_node("Gemm", gemm_in, ["h"], transB=tb),
                      helper.make_node("QuantizeLinear", ["h", "ys", "yz"], ["hq"]),
                      helper.make_node("DequantizeLinear", ["hq", "ys", "yz"], ["y"])]
            tol = dict(rtol=0.0, atol=1.01 * 0.05)
        else:
            nodes.append(helper.make_node("Gemm", gemm_in, ["y"], transB=tb))
            tol = dict(rtol=1e-4, atol=1e-4)
        m = qdq_graph(nodes, inits, (m_, k_))
        label = (f"qdq_gemm_{'s8' if wt == S8 else 'u8'}_tb{tb}{'_perch' if per else ''}"
                 f"{'_floatbias' if bias == 'float' else '_bias' if bias else ''}"
                 f"{'' if requant else '_float'}")
        w.write(label, m, {"x": f32(m_, k_)}, **tol)


def lstm_cases(w):
    """quantize_dynamic of an LSTM writes com.microsoft DynamicQuantizeLSTM (int8 or uint8 W and
    R, one scale and zero point per direction, or per gate column with per_channel). inferd runs
    it as ONNX Runtime does (kernels/cpu/rnn_quant.cc): X quantized to uint8 once and H at every
    step, products in integers, so the outputs agree to float rounding."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    tmp = tempfile.mkdtemp()
    for direction, d in (("forward", 1), ("bidirectional", 2)):
        for wtype, per_channel in ((QuantType.QInt8, False), (QuantType.QUInt8, False),
                                   (QuantType.QInt8, True)):
            hidden, inp, steps, batch = 16, 12, 7, 3
            inits = [numpy_helper.from_array(f32(d, 4 * hidden, inp, scale=0.3), "W"),
                     numpy_helper.from_array(f32(d, 4 * hidden, hidden, scale=0.3), "R"),
                     numpy_helper.from_array(f32(d, 8 * hidden, scale=0.1), "B")]
            node = helper.make_node("LSTM", ["x", "W", "R", "B"], ["y", "yh", "yc"],
                                    hidden_size=hidden, direction=direction)
            g = helper.make_graph([node], "lstm",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                 (steps, batch, inp))],
                                  [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
                                   for n in ("y", "yh", "yc")], inits)
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
            m.ir_version = 8
            tag = f"{direction}_{'u8' if wtype == QuantType.QUInt8 else 's8'}" + \
                ("_per_channel" if per_channel else "")
            src, dst = os.path.join(tmp, "lstm.onnx"), os.path.join(tmp, f"lstm_{tag}_q.onnx")
            onnx.save(m, src)
            quantize_dynamic(src, dst, weight_type=wtype, per_channel=per_channel,
                             op_types_to_quantize=["LSTM"])
            q = onnx.load(dst)
            assert any(n.op_type == "DynamicQuantizeLSTM" for n in q.graph.node), "not quantized"
            w.write(f"dynamicquantizelstm_{tag}", q, {"x": f32(steps, batch, inp)}, rtol=0,
                    atol=1e-5)


if __name__ == "__main__":
    w = CaseWriter.from_args("quant")
    quantize_cases(w)
    integer_cases(w)
    qlinear_cases(w)
    qlinear_int8_cases(w)
    contrib_cases(w)
    qgemm_cases(w)
    softmax_pool_cases(w)
    model_cases(w)
    onednn_cases(w)
    direct_conv_cases(w)
    qdq_fusion_cases(w)
    qdq_gemm_cases(w)
    lstm_cases(w)
    print(f"wrote {w.count} cases")
