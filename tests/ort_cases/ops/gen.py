"""The operator tail against ONNX Runtime on seeded random inputs, in shapes and attribute
combinations the ONNX node tests do not cover:
  - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: rank 2 to 5 inputs, int32 and int64
    targets, weights, ignore_index (also negative and with weights), reductions none/sum/mean,
    float64, SoftmaxCrossEntropyLoss's log_prob output;
  - Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Softsign, ThresholdedRelu, Celu,
    Mish, Shrink (float and int32), IsInf (each detect flag), Gelu (both approximations);
  - BitwiseAnd/Or/Xor/Not over signed and unsigned types with broadcasting, BitShift both ways;
  - NonMaxSuppression (both box formats, flipped corners, ties, thresholds, max 0), EyeLike (k
    beyond the matrix, dtype), Compress (each axis, none, short conditions), the three windows
    (periodic and symmetric, size 1), Det (batched, 1x1), Unique (flat and along an axis,
    sorted and not, all four outputs).

References: ONNX Runtime (one thread, optimizations off); for the float64 unary cases, which
ONNX Runtime's CPU provider lacks, numpy or the onnx package's reference evaluator; for Gelu,
the formula in float64."""
import numpy as np
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from ort_case import CaseWriter

rng = np.random.default_rng(29)
ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
             np.int32: TensorProto.INT32, np.int64: TensorProto.INT64,
             np.uint8: TensorProto.UINT8, np.uint16: TensorProto.UINT16,
             np.uint32: TensorProto.UINT32, np.uint64: TensorProto.UINT64,
             np.int8: TensorProto.INT8, np.int16: TensorProto.INT16, np.bool_: TensorProto.BOOL}


def model(op, feeds, outputs, opset, **attrs):
    """One `op` node over `feeds` (name -> array, in input order; None: an absent input)."""
    inputs = [helper.make_tensor_value_info(n, ONNX_TYPE[v.dtype.type], v.shape)
              for n, v in feeds.items() if v is not None]
    node = helper.make_node(op, [n if v is not None else "" for n, v in feeds.items()],
                            [o for o, _ in outputs], **attrs)
    outs = [helper.make_tensor_value_info(o, t, None) for o, t in outputs]
    graph = helper.make_graph([node], op.lower(), inputs, outs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m, {n: v for n, v in feeds.items() if v is not None}


def main():
    w = CaseWriter.from_args("ops")

    # ---- losses ----
    k = 0
    for op in ("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"):
        for shape in ((7, 5), (3, 4, 6), (2, 3, 4, 5), (2, 6, 2, 3, 2)):
            for dtype in (np.float32, np.float64):
                for reduction in ("none", "sum", "mean"):
                    for weighted, ignore in ((False, None), (True, None), (False, 2),
                                             (True, -1), (True, 1)):
                        for tdt in (np.int64, np.int32):
                            if tdt == np.int32 and (dtype == np.float64 or weighted):
                                continue
                            x = rng.standard_normal(shape).astype(dtype)
                            tshape = (shape[0],) + shape[2:]
                            t = rng.integers(0, shape[1], size=tshape).astype(tdt)
                            if ignore is not None:
                                mask = rng.random(tshape) < 0.3
                                t[mask] = ignore
                            wt = rng.random(shape[1]).astype(dtype) + 0.1 if weighted else None
                            attrs = {"reduction": reduction}
                            if ignore is not None:
                                attrs["ignore_index"] = ignore
                            outs = [("loss", ONNX_TYPE[dtype])]
                            if op == "SoftmaxCrossEntropyLoss" and k % 2 == 0:
                                outs.append(("log_prob", ONNX_TYPE[dtype]))
                            m, f = model(op, {"x": x, "t": t, "w": wt}, outs, 13, **attrs)
                            w.write(f"{op.lower()}_{k}", m, f, rtol=1e-5, atol=1e-6)
                            k += 1

    # ---- unary math and activations ----
    # numpy's float64 results where ONNX Runtime's CPU provider has no float64 kernel.
    numpy_ref = {"Tan": np.tan, "Asin": np.arcsin, "Acos": np.arccos, "Atan": np.arctan,
                 "Sinh": np.sinh, "Cosh": np.cosh, "Asinh": np.arcsinh, "Acosh": np.arccosh,
                 "Atanh": np.arctanh, "Softsign": lambda v: v / (1 + np.abs(v)),
                 "Mish": lambda v: v * np.tanh(np.logaddexp(0, v))}

    def unary(op, x, opset, name=None, **attrs):
        m, f = model(op, {"x": x}, [("y", ONNX_TYPE[x.dtype.type] if op != "IsInf"
                                     else TensorProto.BOOL)], opset, **attrs)
        expected = None
        if x.dtype == np.float64:
            if op in numpy_ref:
                expected = [numpy_ref[op](x)]
            else:  # the onnx package's reference implementation
                expected = ReferenceEvaluator(m).run(None, f)
        w.write(name or op.lower(), m, f, rtol=1e-5, atol=1e-6, expected=expected)

    wide = lambda dt: (rng.standard_normal((4, 33, 17)) * 3).astype(dt)
    unit = lambda dt: rng.uniform(-0.999, 0.999, (4, 33, 17)).astype(dt)
    for dt in (np.float32, np.float64):
        s = "f32" if dt == np.float32 else "f64"
        unary("Tan", unit(dt), 13, f"tan_{s}")
        unary("Asin", unit(dt), 13, f"asin_{s}")
        unary("Acos", unit(dt), 13, f"acos_{s}")
        unary("Atan", wide(dt), 13, f"atan_{s}")
        unary("Sinh", wide(dt), 13, f"sinh_{s}")
        unary("Cosh", wide(dt), 13, f"cosh_{s}")
        unary("Asinh", wide(dt), 13, f"asinh_{s}")
        unary("Acosh", (np.abs(wide(dt)) + 1).astype(dt), 13, f"acosh_{s}")
        unary("Atanh", unit(dt), 13, f"atanh_{s}")
        unary("Softsign", wide(dt), 13, f"softsign_{s}")
        unary("ThresholdedRelu", wide(dt), 13, f"thresholded_relu_{s}", alpha=0.7)
        unary("Mish", wide(dt) * 4, 18, f"mish_{s}")
        unary("Shrink", wide(dt), 13, f"shrink_{s}", lambd=1.2, bias=0.4)
        x = wide(dt)
        x.flat[::7] = np.inf
        x.flat[3::7] = -np.inf
        x.flat[5::11] = np.nan
        for pos, neg in ((1, 1), (1, 0), (0, 1)):
            unary("IsInf", x, 20, f"isinf_{s}_{pos}{neg}", detect_positive=pos,
                  detect_negative=neg)
    unary("Celu", wide(np.float32), 13, "celu_alpha", alpha=1.7)
    unary("Shrink", rng.integers(-9, 9, (5, 31)).astype(np.int32), 13, "shrink_int32", lambd=2.0,
          bias=1.0)
    # ONNX Runtime 1.23 has no Gelu for opset 20 on CPU in every build: its reference here is
    # the formula in float64, the operator's definition.
    from math import erf, sqrt, tanh, pi
    x = wide(np.float32)
    exact = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / sqrt(2))))(x.astype(np.float64))
    approx = np.vectorize(lambda v: 0.5 * v * (1 + tanh(sqrt(2 / pi) * (v + 0.044715 * v ** 3))))(
        x.astype(np.float64))
    m, f = model("Gelu", {"x": x}, [("y", TensorProto.FLOAT)], 20)
    w.write("gelu_none", m, f, rtol=1e-5, atol=1e-6, expected=[exact.astype(np.float32)])
    m, f = model("Gelu", {"x": x}, [("y", TensorProto.FLOAT)], 20, approximate="tanh")
    w.write("gelu_tanh", m, f, rtol=1e-5, atol=1e-6, expected=[approx.astype(np.float32)])

    # ---- bitwise ----
    for dt in (np.int8, np.int32, np.int64, np.uint8, np.uint16, np.uint64):
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, (3, 1, 5), dtype=dt, endpoint=True)
        b = rng.integers(info.min, info.max, (4, 1), dtype=dt, endpoint=True)
        for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
            m, f = model(op, {"a": a, "b": b}, [("c", ONNX_TYPE[dt])], 18)
            w.write(f"{op.lower()}_{np.dtype(dt).name}", m, f)
        m, f = model("BitwiseNot", {"a": a}, [("c", ONNX_TYPE[dt])], 18)
        w.write(f"bitwisenot_{np.dtype(dt).name}", m, f)
    for dt in (np.uint8, np.uint32, np.uint64):  # ONNX Runtime has no uint16 BitShift
        bits = np.dtype(dt).itemsize * 8
        a = rng.integers(0, np.iinfo(dt).max, (2, 3, 7), dtype=dt, endpoint=True)
        s = rng.integers(0, bits - 1, (3, 7)).astype(dt)
        for direction in ("LEFT", "RIGHT"):
            m, f = model("BitShift", {"a": a, "s": s}, [("c", ONNX_TYPE[dt])], 11,
                         direction=direction)
            w.write(f"bitshift_{direction.lower()}_{np.dtype(dt).name}", m, f)
    # ---- NonMaxSuppression ----
    def scalar(v, dt):
        return np.array([v], dtype=dt)

    for k, (b, c, n, center, max_out, iou, score) in enumerate((
            (1, 1, 30, 0, 10, 0.5, None), (2, 3, 40, 0, 5, 0.3, 0.2), (2, 2, 25, 1, 100, 0.6, 0.0),
            (1, 4, 60, 1, 7, 0.0, 0.5), (3, 1, 20, 0, 0, 0.5, None), (1, 2, 50, 0, 50, 1.0, 0.9))):
        xy = rng.random((b, n, 2)).astype(np.float32) * 10
        wh = rng.random((b, n, 2)).astype(np.float32) * 4 + 0.1
        if center:
            boxes = np.concatenate([xy, wh], axis=2)
        else:  # [y1, x1, y2, x2], some corners flipped
            boxes = np.concatenate([xy, xy + wh], axis=2)
            flip = rng.random((b, n)) < 0.3
            boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
        scores = rng.random((b, c, n)).astype(np.float32)
        scores.flat[::9] = 0.5  # ties
        feeds = {"boxes": boxes.astype(np.float32), "scores": scores,
                 "max": scalar(max_out, np.int64), "iou": scalar(iou, np.float32),
                 "score": None if score is None else scalar(score, np.float32)}
        m, f = model("NonMaxSuppression", feeds, [("sel", TensorProto.INT64)], 11,
                     center_point_box=center)
        w.write(f"nms_{k}", m, f)

    # ---- EyeLike, Compress, windows, Det ----
    for k, (shape, kk, dtype) in enumerate((((4, 6), 0, None), ((5, 3), 2, TensorProto.INT64),
                                           ((3, 7), -2, TensorProto.DOUBLE),
                                           ((6, 6), 9, None))):
        x = rng.standard_normal(shape).astype(np.float32)
        attrs = {"k": kk}
        if dtype is not None:
            attrs["dtype"] = dtype
        m, f = model("EyeLike", {"x": x}, [("y", dtype or TensorProto.FLOAT)], 9, **attrs)
        w.write(f"eyelike_{k}", m, f)
    x = rng.standard_normal((3, 5, 4)).astype(np.float32)
    for k, (axis, cond) in enumerate(((0, [1, 0, 1]), (1, [0, 1, 1, 0, 1]), (2, [1, 1]),
                                      (-1, [0, 0, 0, 1]), (None, [1, 0] * 20))):
        attrs = {} if axis is None else {"axis": axis}
        m, f = model("Compress", {"x": x, "c": np.array(cond, dtype=np.bool_)},
                     [("y", TensorProto.FLOAT)], 11, **attrs)
        w.write(f"compress_{k}", m, f)
    for op in ("HannWindow", "HammingWindow", "BlackmanWindow"):
        for periodic in (0, 1):
            for size, out_t in ((1, TensorProto.FLOAT), (17, TensorProto.DOUBLE),
                                (64, TensorProto.FLOAT)):
                m, f = model(op, {"n": np.array(size, dtype=np.int64)}, [("y", out_t)], 17,
                             periodic=periodic, output_datatype=out_t)
                w.write(f"{op.lower()}_{periodic}_{size}", m, f, rtol=1e-5, atol=1e-6)
    for k, shape in enumerate(((5, 5), (2, 3, 4, 4), (7, 1, 1))):
        x = rng.standard_normal(shape).astype(np.float32)
        m, f = model("Det", {"x": x}, [("y", TensorProto.FLOAT)], 11)
        w.write(f"det_{k}", m, f, rtol=1e-4, atol=1e-5)
    # ---- Unique ----
    outs4 = [("y", None), ("indices", TensorProto.INT64), ("inverse", TensorProto.INT64),
             ("counts", TensorProto.INT64)]
    for k, (x, axis, sort) in enumerate((
            (rng.integers(-5, 5, (40,)).astype(np.int64), None, 1),
            (rng.integers(-5, 5, (40,)).astype(np.int64), None, 0),
            (rng.integers(0, 3, (6, 4)).astype(np.float32), None, 1),
            (rng.integers(0, 2, (6, 3)).astype(np.float32), 0, 1),
            (rng.integers(0, 2, (6, 3)).astype(np.float32), 0, 0),
            (rng.integers(0, 2, (2, 7, 2)).astype(np.int8), 1, 1),
            (rng.integers(0, 2, (2, 7, 2)).astype(np.float64), -2, 0),
            (rng.integers(0, 3, (3, 5)).astype(np.int64), 1, 1))):
        attrs = {"sorted": sort}
        if axis is not None:
            attrs["axis"] = axis
        outs = [(n, t if t is not None else ONNX_TYPE[x.dtype.type]) for n, t in outs4]
        m, f = model("Unique", {"x": x}, outs, 11, **attrs)
        w.write(f"unique_{k}", m, f)
    print(f"wrote {w.count} cases")


if __name__ == "__main__":
    main()
