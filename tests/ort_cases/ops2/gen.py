"""The :ops2_kernels against ONNX Runtime on seeded random inputs, beyond the ONNX node tests:
  - GridSample (opset 16): every mode x padding mode x align_corners, batch 2, 3 channels,
    grids reaching past the image; float64; opset 20's linear / nearest / cubic names, its 3-D
    (5-D tensor) and 1-D forms in every mode;
  - RoiAlign (opsets 10 and 16): avg and max, both coordinate modes, fixed and adaptive
    sampling, spatial_scale, batch 2, regions partly or wholly outside the image;
  - MaxUnpool: 1-D, 2-D and 3-D, strides and pads, with and without output_shape;
  - LRN (sizes 1 to 7; 4-D and odd sizes, what ONNX Runtime takes), MeanVarianceNormalization
    (several axes), ReverseSequence (both axis orders, rank 3, int64 and float64);
  - DFT (opsets 17 and 20): power-of-two and other lengths, each axis, dft_length shorter and
    longer than the signal, onesided, inverse, complex input, float64; STFT: windows, frame
    lengths (power of two and not), onesided both ways, complex signal, batch 2;
    MelWeightMatrix: several bin counts, rates and edges, float64 output.

References: ONNX Runtime (one thread, optimizations off); the onnx package's reference evaluator
where ONNX Runtime has no kernel (float64 GridSample) or disagrees with the ONNX reference and
its node tests (GridSample cubic + border, MaxUnpool with output_shape, complex STFT; see the
calls)."""
import numpy as np
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from ort_case import CaseWriter

rng = np.random.default_rng(31)
ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
             np.int32: TensorProto.INT32, np.int64: TensorProto.INT64}


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


def cubic_border(mode, padding):
    """GridSample cubic with border padding: the ONNX reference (and its node tests) clamp the
    coordinate into the image and then each tap; ONNX Runtime clamps only the taps. inferd
    follows the reference."""
    return mode in ("bicubic", "cubic") and padding == "border"


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def main():
    w = CaseWriter.from_args("ops2")
    F = TensorProto.FLOAT
    D = TensorProto.DOUBLE

    # ---- GridSample ----
    k = 0
    for mode in ("bilinear", "nearest", "bicubic"):
        for padding in ("zeros", "border", "reflection"):
            for align in (0, 1):
                for dtype in (np.float32, np.float64):
                    if dtype == np.float64 and (padding != "reflection" or align == 0):
                        continue
                    x = rng.standard_normal((2, 3, 5, 7)).astype(dtype)
                    g = rng.uniform(-1.3, 1.3, (2, 4, 6, 2)).astype(dtype)
                    # The onnx reference evaluator (which knows opset 20's mode names only)
                    # where ONNX Runtime has no kernel (float64) or differs from it (below).
                    use_ref = dtype == np.float64 or cubic_border(mode, padding)
                    v20 = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
                    m, f = model("GridSample", {"X": x, "grid": g},
                                 [("Y", ONNX_TYPE[dtype])], 20 if use_ref else 16,
                                 mode=v20 if use_ref else mode,
                                 padding_mode=padding, align_corners=align)
                    ref = ReferenceEvaluator(m).run(None, f) if use_ref else None
                    w.write(f"gridsample_{k}", m, f, rtol=1e-4, atol=1e-5, expected=ref)
                    k += 1
    for mode in ("linear", "nearest", "cubic"):
        for padding in ("zeros", "border", "reflection"):
            x = f32(1, 2, 6, 5)
            g = rng.uniform(-1.2, 1.2, (1, 3, 4, 2)).astype(np.float32)
            m, f = model("GridSample", {"X": x, "grid": g}, [("Y", F)], 20, mode=mode,
                         padding_mode=padding, align_corners=k % 2)
            ref = ReferenceEvaluator(m).run(None, f) if cubic_border(mode, padding) else None
            w.write(f"gridsample_{k}", m, f, rtol=1e-4, atol=1e-5, expected=ref)
            k += 1
    for mode in ("linear", "nearest"):
        for padding in ("zeros", "border", "reflection"):
            x = f32(2, 2, 3, 4, 5)
            g = rng.uniform(-1.2, 1.2, (2, 2, 3, 4, 3)).astype(np.float32)
            m, f = model("GridSample", {"X": x, "grid": g}, [("Y", F)], 20, mode=mode,
                         padding_mode=padding, align_corners=k % 2)
            w.write(f"gridsample_{k}", m, f, rtol=1e-4, atol=1e-5)
            k += 1

    # Shapes ONNX Runtime does not take (3-D cubic, 1-D): the onnx reference evaluator.
    for spatial, mode, padding in ((3, "cubic", "zeros"), (3, "cubic", "border"),
                                   (3, "cubic", "reflection"), (1, "linear", "reflection"),
                                   (1, "cubic", "border"), (1, "nearest", "zeros")):
        x = f32(*((1, 2) + (3, 4, 3)[:spatial]))
        g = rng.uniform(-1.2, 1.2, (1,) + (2, 3, 2)[:spatial] + (spatial,)).astype(np.float32)
        m, f = model("GridSample", {"X": x, "grid": g}, [("Y", F)], 20, mode=mode,
                     padding_mode=padding, align_corners=k % 2)
        w.write(f"gridsample_{k}", m, f, rtol=1e-4, atol=1e-5,
                expected=ReferenceEvaluator(m).run(None, f))
        k += 1

    # ---- RoiAlign ----
    k = 0
    x = f32(2, 3, 12, 10)
    rois = np.array([[0, 0, 9, 11], [1.5, 2.2, 6.7, 8.1], [-3, -2, 4, 5], [8, 9, 15, 14],
                     [2, 3, 2.5, 3.2], [20, 20, 30, 30]], dtype=np.float32)
    idx = np.array([0, 1, 1, 0, 1, 0], dtype=np.int64)
    for opset, modes in ((10, (None,)), (16, ("half_pixel", "output_half_pixel"))):
        for ctm in modes:
            for pool in ("avg", "max"):
                for ratio, scale, oh, ow in ((0, 1.0, 3, 4), (2, 0.5, 2, 2), (1, 1.0, 5, 3)):
                    attrs = {"mode": pool, "sampling_ratio": ratio, "spatial_scale": scale,
                             "output_height": oh, "output_width": ow}
                    if ctm is not None:
                        attrs["coordinate_transformation_mode"] = ctm
                    m, f = model("RoiAlign", {"X": x, "rois": rois, "batch_indices": idx},
                                 [("Y", F)], opset, **attrs)
                    w.write(f"roialign_{k}", m, f, rtol=1e-4, atol=1e-5)
                    k += 1

    # ---- MaxUnpool ----
    k = 0
    for in_shape, kernel, strides, pads in (((2, 3, 5), [3], [2], [1, 0]),
                                            ((1, 2, 3, 4), [2, 2], [2, 2], [0, 0, 0, 0]),
                                            ((2, 1, 3, 3), [3, 2], [2, 3], [1, 0, 0, 1]),
                                            ((1, 2, 2, 2, 3), [2, 2, 2], [2, 2, 2],
                                             [0, 0, 0, 0, 0, 0])):
        for with_shape in (False, True):
            sp = [(d - 1) * s - pads[i] - pads[i + len(kernel)] + kk
                  for i, (d, s, kk) in enumerate(zip(in_shape[2:], strides, kernel))]
            # The indices count over the unpooled shape; output_shape may be larger.
            total = int(np.prod(in_shape[:2])) * int(np.prod(sp))
            out_shape = list(in_shape[:2]) + [d + 1 + i for i, d in enumerate(sp)]
            x = f32(*in_shape)
            ind = rng.choice(total, size=x.size, replace=False).astype(np.int64).reshape(in_shape)
            feeds = {"x": x, "i": ind}
            if with_shape:
                feeds["s"] = np.array(out_shape, dtype=np.int64)
            attrs = {"kernel_shape": kernel, "strides": strides, "pads": pads}
            m, f = model("MaxUnpool", feeds, [("y", F)], 11, **attrs)
            # With output_shape, ONNX Runtime reads the indices over output_shape; the ONNX
            # reference and its node test over the unpooled shape, padded to output_shape.
            # inferd follows the reference.
            ref = ReferenceEvaluator(m).run(None, f) if with_shape else None
            w.write(f"maxunpool_{k}", m, f, expected=ref)
            k += 1

    # ---- LRN, MeanVarianceNormalization, ReverseSequence ----
    k = 0
    for shape, size in (((2, 6, 5, 1), 1), ((1, 7, 3, 4), 3), ((2, 5, 3, 2), 5), ((3, 4, 6, 6), 7)):
        x = f32(*shape, scale=3.0)
        m, f = model("LRN", {"x": x}, [("y", F)], 13, size=size, alpha=0.01 * (k + 1),
                     beta=0.6 + 0.1 * k, bias=1.0 + 0.5 * k)
        w.write(f"lrn_{k}", m, f)
        k += 1
    k = 0
    for shape, axes in (((2, 3, 4, 5), None), ((2, 3, 4, 5), [1]), ((3, 4, 5), [0, 2]),
                        ((2, 3, 4, 5), [2, 3]), ((4, 6), [-1])):
        x = f32(*shape, scale=2.0) + 1.5
        attrs = {} if axes is None else {"axes": axes}
        m, f = model("MeanVarianceNormalization", {"x": x}, [("y", F)], 13, **attrs)
        w.write(f"mvn_{k}", m, f)
        k += 1
    k = 0
    for dtype in (np.float32, np.int64, np.float64):
        for time_axis in (0, 1):
            shape = (5, 3, 4) if time_axis == 0 else (3, 5, 4)
            x = (rng.standard_normal(shape) * 10).astype(dtype)
            lens = np.array([5, 1, 3], dtype=np.int64)
            m, f = model("ReverseSequence", {"x": x, "l": lens}, [("y", ONNX_TYPE[dtype])], 10,
                         time_axis=time_axis, batch_axis=1 - time_axis)
            w.write(f"reversesequence_{k}", m, f)
            k += 1

    # ---- DFT, STFT, MelWeightMatrix ----
    k = 0
    for opset in (17, 20):
        for shape, axis, length, onesided, inverse in (
                ((2, 16, 1), 1, None, 0, 0), ((2, 12, 2), 1, None, 0, 1),
                ((3, 17, 1), 1, None, 1, 0), ((2, 8, 6, 2), 2, None, 0, 0),
                ((2, 8, 6, 1), 1, 11, 1, 0), ((1, 10, 2), 1, 6, 0, 0),
                ((2, 5, 2), 1, 32, 0, 1), ((4, 9, 3, 2), -3, None, 0, 1)):
            for dtype in (np.float32, np.float64):
                if dtype == np.float64 and k % 3:
                    continue
                x = rng.standard_normal(shape).astype(dtype)
                feeds = {"x": x}
                attrs = {"onesided": onesided, "inverse": inverse}
                if opset == 17:
                    attrs["axis"] = axis
                    feeds["n"] = None if length is None else np.array(length, dtype=np.int64)
                else:
                    feeds["n"] = None if length is None else np.array(length, dtype=np.int64)
                    feeds["a"] = np.array(axis, dtype=np.int64)
                m, f = model("DFT", feeds, [("y", ONNX_TYPE[dtype])], opset, **attrs)
                w.write(f"dft_{k}", m, f, rtol=1e-4, atol=1e-4)
                k += 1
    k = 0
    for batch, length, comps, step, win_len, use_len, onesided, dtype in (
            (1, 64, 1, 8, 16, False, 1, np.float32), (2, 100, 1, 10, 20, True, 1, np.float32),
            (2, 50, 2, 7, 12, False, 0, np.float32), (1, 33, 1, 4, None, True, 0, np.float32),
            (2, 40, 1, 5, 9, True, 1, np.float64), (1, 30, 1, 30, 30, False, 1, np.float32)):
        x = rng.standard_normal((batch, length, comps)).astype(dtype)
        feeds = {"x": x, "step": np.array(step, dtype=np.int64)}
        fl = win_len if win_len is not None else 11
        feeds["window"] = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(fl) / fl)).astype(dtype) \
            if win_len is not None else None
        if use_len:
            feeds["fl"] = np.array(fl, dtype=np.int64)
        m, f = model("STFT", feeds, [("y", ONNX_TYPE[dtype])], 17, onesided=onesided)
        # ONNX Runtime 1.23 returns garbage for a complex signal: the onnx reference there.
        ref = ReferenceEvaluator(m).run(None, f) if comps == 2 else None
        w.write(f"stft_{k}", m, f, rtol=1e-4, atol=1e-4, expected=ref)
        k += 1
    k = 0
    for bins, n, rate, lo, hi, out_type in ((8, 16, 8192, 0.0, 4096.0, None),
                                            (20, 512, 16000, 20.0, 8000.0, None),
                                            (12, 100, 22050, 300.0, 5000.0, D),
                                            (5, 31, 1000, 10.0, 400.0, None)):
        feeds = {"b": np.array(bins, dtype=np.int64), "n": np.array(n, dtype=np.int64),
                 "r": np.array(rate, dtype=np.int64), "lo": np.array(lo, dtype=np.float32),
                 "hi": np.array(hi, dtype=np.float32)}
        attrs = {} if out_type is None else {"output_datatype": out_type}
        m, f = model("MelWeightMatrix", feeds, [("y", out_type or F)], 17, **attrs)
        w.write(f"melweightmatrix_{k}", m, f)
        k += 1

    # ---- TfIdfVectorizer (integer tokens) ----
    # A pool of 1-, 2- and 3-grams over tokens 0..7, drawn so that the inputs hit some of them;
    # every mode, skips, batched and 1-D X, int32 and int64, weights, output columns shared and
    # left empty.
    pool1, pool2, pool3 = [1, 3, 5, 7], [1, 2, 3, 3, 5, 1, 0, 4], [1, 2, 3, 2, 2, 2]
    pool = pool1 + pool2 + pool3
    counts = [0, len(pool1), len(pool1) + len(pool2)]
    grams = len(pool1) + len(pool2) // 2 + len(pool3) // 3
    k = 0
    for mode, lo, hi, skip, shape, dtype, weighted, columns in (
            ("TF", 1, 1, 0, (10,), np.int32, False, "plain"),
            ("TF", 1, 2, 2, (3, 12), np.int64, False, "plain"),
            ("IDF", 2, 3, 1, (2, 15), np.int32, True, "permuted"),
            ("TFIDF", 1, 3, 3, (4, 9), np.int64, True, "permuted"),
            ("TFIDF", 2, 2, 0, (20,), np.int64, False, "plain"),
            ("IDF", 1, 3, 4, (2, 6), np.int32, False, "shared")):
        x = rng.integers(0, 8, size=shape).astype(dtype)
        indexes = list(range(grams))
        if columns == "permuted":  # the weights follow Y's columns, not the pool's order
            indexes = [int(v) for v in rng.permutation(grams)]
        if columns == "shared":  # two grams into one column, and a column no gram writes
            indexes = [0] + list(range(grams - 1))
            indexes[-1] = grams
        attrs = dict(mode=mode, min_gram_length=lo, max_gram_length=hi, max_skip_count=skip,
                     ngram_counts=counts, ngram_indexes=indexes, pool_int64s=pool)
        if weighted:  # one weight per n-gram, applied to Y's columns (ONNX Runtime's reading)
            attrs["weights"] = [float(v) for v in rng.uniform(0.5, 2.0, grams)]
        m, f = model("TfIdfVectorizer", {"x": x}, [("y", F)], 9, **attrs)
        w.write(f"tfidfvectorizer_{k}", m, f)
        k += 1


if __name__ == "__main__":
    main()
