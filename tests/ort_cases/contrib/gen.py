"""ONNX Runtime's transformer contrib operators (com.microsoft) against ONNX Runtime on seeded
random inputs, over their attribute and optional-input space: Gelu, FastGelu (+-bias), BiasGelu,
QuickGelu, BiasAdd; SkipLayerNormalization and SkipSimplifiedLayerNormalization (beta, bias,
optional outputs, 2-D input, broadcast skip); SimplifiedLayerNormalization (default domain, as
ORT registers it); EmbedLayerNormalization (segments, mask, position_ids); Attention (no mask,
key lengths, end/start positions, 2-D and 3-D masks, unidirectional, qkv_hidden_sizes, past and
present, attention_bias, scale, mask_filter_value, no bias); MultiHeadAttention (bias, masks,
past_key/past_value with present outputs, cross-attention lengths).

Then a small BERT-like encoder (embeddings + 2 layers, bert_model.py) written in plain ONNX ops
is checked as is, and after ONNX Runtime's transformer optimizer
(onnxruntime.transformers.optimizer, model_type="bert") has fused it into
EmbedLayerNormalization, Attention, SkipLayerNormalization and BiasGelu (the generator fails if
the fusion did not happen). The fused model's reference is ORT's run of it, which must agree
with ORT's run of the unfused model."""
import os
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import collections

import onnx
import ort_case
from bert_model import bert_model
from ort_case import CaseWriter

MS = "com.microsoft"
rng = np.random.default_rng(2024)


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset),
                                            helper.make_opsetid(MS, 1)])
    m.ir_version = 8
    return m


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def case(w, name, op, feeds, outputs, attrs=None, domain=MS, consts=None, out_types=None,
         rtol=1e-4, atol=1e-5, expected=None, min_inputs=0):
    """One node: `feeds` is an ordered list of (name, array or None) for its inputs (None: an
    absent optional input; trailing absent ones are dropped, or padded to `min_inputs` where
    ORT's shape inference reads that many), `consts` names of inputs written as initializers; `outputs` the
    node's outputs ("" to skip one)."""
    consts = consts or ()
    in_names = [n if a is not None else "" for n, a in feeds]
    while len(in_names) > min_inputs and in_names[-1] == "":
        in_names.pop()
    in_names += [""] * (min_inputs - len(in_names))
    node = helper.make_node(op, in_names, outputs, domain=domain, **(attrs or {}))
    inputs, inits, values = [], [], {}
    for n, a in feeds:
        if a is None:
            continue
        t = TensorProto.INT32 if a.dtype == np.int32 else TensorProto.FLOAT
        if n in consts:
            inits.append(numpy_helper.from_array(a, n))
        else:
            inputs.append(vi(n, a.shape, t))
            values[n] = a
    out_types = out_types or {}
    outs = [vi(o, None, out_types.get(o, TensorProto.FLOAT)) for o in outputs if o]
    w.write(name, model([node], inputs, outs, inits), values, rtol=rtol, atol=atol,
            expected=expected)


def activation_cases(w):
    x = f32(2, 5, 16, scale=2.0)
    b = f32(16)
    case(w, "gelu", "Gelu", [("x", x)], ["y"])
    case(w, "fast_gelu", "FastGelu", [("x", x)], ["y"])
    case(w, "fast_gelu_bias", "FastGelu", [("x", x), ("b", b)], ["y"], consts=("b",))
    case(w, "bias_gelu", "BiasGelu", [("x", x), ("b", b)], ["y"], consts=("b",))
    case(w, "quick_gelu", "QuickGelu", [("x", x)], ["y"])
    case(w, "quick_gelu_alpha", "QuickGelu", [("x", x)], ["y"], {"alpha": 1.0})
    # ONNX Runtime has BiasAdd for CUDA and ROCm only: the reference is its definition.
    skip = f32(2, 5, 16)
    case(w, "bias_add", "BiasAdd", [("x", x), ("b", b), ("s", skip)], ["y"],
         expected=[x + b + skip])


def skip_norm_cases(w):
    for simplified in (False, True):
        op = "SkipSimplifiedLayerNormalization" if simplified else "SkipLayerNormalization"
        tag = "skip_simplified" if simplified else "skip_ln"
        x, s = f32(2, 4, 32), f32(2, 4, 32)
        g, be, bi = f32(32), f32(32), f32(32)
        betas = (False,) if simplified else (False, True)
        for with_beta in betas:
            for with_bias in (False, True):
                feeds = [("x", x), ("s", s), ("g", g)]
                if not simplified:
                    feeds.append(("be", be if with_beta else None))
                feeds.append(("bi", bi if with_bias else None))
                name = f"{tag}_beta{int(with_beta)}_bias{int(with_bias)}"
                case(w, name, op, feeds, ["y"], {"epsilon": 1e-5}, consts=("g", "be", "bi"))
        # ONNX Runtime's CPU kernels leave mean and inv_std_var unwritten (None): only the
        # input_skip_bias_sum output is compared (inferd's statistics: contrib_test.cc).
        feeds = [("x", x), ("s", s), ("g", g)] + ([] if simplified else [("be", be)]) + \
            [("bi", bi)]
        case(w, f"{tag}_sum_output", op, feeds, ["y", "", "", "sum"], consts=("g", "be", "bi"))
        case(w, f"{tag}_2d", op, [("x", f32(6, 32)), ("s", f32(6, 32)), ("g", g)], ["y"],
             {"epsilon": 1e-6})
        case(w, f"{tag}_skip_broadcast", op, [("x", x), ("s", f32(1, 4, 32)), ("g", g)], ["y"])
    x = f32(2, 3, 4, 8)
    case(w, "simplified_ln", "SimplifiedLayerNormalization", [("x", x), ("g", f32(8))], ["y"],
         {"epsilon": 1e-6}, domain="")
    case(w, "simplified_ln_axis2_inv", "SimplifiedLayerNormalization",
         [("x", x), ("g", f32(4, 8))], ["y", "inv"], {"axis": 2}, domain="")


def embed_cases(w):
    b, s, h, vocab, npos = 2, 7, 16, 30, 10
    ids = rng.integers(0, vocab, (b, s)).astype(np.int32)
    seg = rng.integers(0, 2, (b, s)).astype(np.int32)
    mask = np.array([[1] * 7, [1] * 4 + [0] * 3], dtype=np.int32)
    word, pos, segw = f32(vocab, h), f32(npos, h), f32(2, h)
    gamma, beta = f32(h), f32(h)
    consts = ("word", "pos", "segw", "gamma", "beta")
    # ORT's shape inference writes mask_index: every case has that output.
    i32 = {"mask_index": TensorProto.INT32}
    base = [("ids", ids), ("seg", seg), ("word", word), ("pos", pos), ("segw", segw),
            ("gamma", gamma), ("beta", beta)]
    case(w, "embed_ln", "EmbedLayerNormalization", base, ["y", "mask_index"],
         {"epsilon": 1e-12}, out_types=i32,
         consts=consts, min_inputs=8)
    case(w, "embed_ln_mask", "EmbedLayerNormalization", base + [("mask", mask)],
         ["y", "mask_index"], consts=consts, out_types=i32, min_inputs=8)
    case(w, "embed_ln_sum", "EmbedLayerNormalization", base + [("mask", mask)],
         ["y", "mask_index", "sum"], consts=consts, out_types=i32, min_inputs=8)
    no_seg = [("ids", ids), ("seg", None), ("word", word), ("pos", pos), ("segw", None),
              ("gamma", gamma), ("beta", beta)]
    case(w, "embed_ln_no_segment", "EmbedLayerNormalization", no_seg, ["y", "mask_index"],
         out_types=i32, consts=consts,
         min_inputs=8)
    pos_ids = np.array([[3, 1, 4, 1, 5, 9, 2]], dtype=np.int32)
    case(w, "embed_ln_position_ids", "EmbedLayerNormalization",
         base + [("mask", None), ("pos_ids", np.repeat(pos_ids, b, axis=0))],
         ["y", "mask_index"], out_types=i32, consts=consts, min_inputs=9)


def attention_cases(w):
    b, s, hidden, n = 2, 6, 16, 4
    x = f32(b, s, hidden)
    wt, bias = f32(hidden, 3 * hidden, scale=0.3), f32(3 * hidden, scale=0.3)
    consts = ("w", "bias")

    def att(name, mask=None, past=None, attrs=None, ab=None, weights=wt, bias_=bias, outs=None,
            xx=x):
        a = {"num_heads": n}
        a.update(attrs or {})
        feeds = [("x", xx), ("w", weights), ("bias", bias_), ("mask", mask), ("past", past),
                 ("ab", ab)]
        case(w, name, "Attention", feeds, outs or ["y"], a, consts=consts)

    att("attention")
    # ONNX Runtime 1.23's CPU Attention crashes without its bias input: the reference for the
    # bias-free node is ORT's run of the same node with a zero bias.
    zero = helper.make_node("Attention", ["x", "w", "zb"], ["y"], domain=MS, num_heads=n)
    ref = model([zero], [vi("x", x.shape)], [vi("y", None)],
                [numpy_helper.from_array(wt, "w"),
                 numpy_helper.from_array(np.zeros(3 * hidden, np.float32), "zb")])
    _, expected = w.reference(ref, {"x": x})
    case(w, "attention_no_bias", "Attention", [("x", x), ("w", wt)], ["y"], {"num_heads": n},
         consts=consts, expected=expected)
    att("attention_key_lengths", np.array([6, 3], dtype=np.int32))
    att("attention_end_start", np.array([5, 6, 1, 2], dtype=np.int32))
    m2 = np.ones((b, s), dtype=np.int32)
    m2[1, 4:] = 0
    m2[0, 0] = 0
    att("attention_mask_2d", m2)
    m3 = (rng.random((b, s, s)) > 0.3).astype(np.int32)
    m3[:, :, 0] = 1
    att("attention_mask_3d", m3)
    att("attention_causal", attrs={"unidirectional": 1})
    # With causal masking, a query row whose every key is masked (m2[0, 0] = 0 masks batch 0's
    # first query's only visible key) differs from ORT: inferd adds the filter value twice there
    # and ORT does not; such rows are left out of this case (docs/contrib-ops.md).
    m2c = m2.copy()
    m2c[0, 0] = 1
    att("attention_causal_mask_2d", m2c, attrs={"unidirectional": 1})
    att("attention_scale_filter", m2, attrs={"scale": 0.3, "mask_filter_value": -1e4 * 2})
    att("attention_bias_input", ab=f32(b, n, s, s))
    att("attention_bias_broadcast", ab=f32(1, 1, s, s))
    w2 = f32(hidden, 16 + 16 + 8, scale=0.3)
    att("attention_qkv_sizes", attrs={"qkv_hidden_sizes": [16, 16, 8]}, weights=w2,
        bias_=f32(40, scale=0.3))
    past = f32(2, b, n, 5, hidden // n)
    xs = f32(b, 1, hidden)
    att("attention_past_present", None, past, {"unidirectional": 1}, outs=["y", "present"], xx=xs)
    att("attention_past_mask", np.ones((b, 6), dtype=np.int32), past, {"unidirectional": 1},
        outs=["y", "present"], xx=xs)
    att("attention_present_only", outs=["y", "present"], attrs={"unidirectional": 1})


def mha_cases(w):
    b, s, l, d, dv, n = 2, 5, 7, 16, 8, 2
    q, k, v = f32(b, s, d), f32(b, l, d), f32(b, l, dv)
    bias = f32(2 * d + dv)

    def mha(name, feeds_extra=(), attrs=None, outs=None, kk=k, vv=v, qq=q, with_bias=False,
            bias=bias):
        a = {"num_heads": n}
        a.update(attrs or {})
        feeds = [("q", qq), ("k", kk), ("v", vv), ("bias", bias if with_bias else None)]
        feeds += list(feeds_extra)
        case(w, name, "MultiHeadAttention", feeds, outs or ["y"], a, consts=("bias",))

    mha("mha")
    mha("mha_bias", with_bias=True)
    mha("mha_key_lengths", [("mask", np.array([7, 4], dtype=np.int32))])
    m2 = np.ones((b, l), dtype=np.int32)
    m2[1, 5:] = 0
    mha("mha_mask_2d_bias", [("mask", m2)], with_bias=True)
    mha("mha_scale", attrs={"scale": 0.1})
    mha("mha_attention_bias", [("mask", None), ("ab", f32(b, n, s, l))])
    # ORT wants V's head size equal to Q/K's with a past.
    past_k, past_v = f32(b, n, 3, d // n), f32(b, n, 3, d // n)
    qs = f32(b, 1, d)
    ks, vs = f32(b, 1, d), f32(b, 1, d)
    mha("mha_past_present", [("mask", None), ("ab", None), ("pk", past_k), ("pv", past_v)],
        outs=["y", "present_k", "present_v"], kk=ks, vv=vs, qq=qs, with_bias=True,
        bias=f32(3 * d))
    mha("mha_present", outs=["y", "present_k", "present_v"], with_bias=True)
    mha("mha_self_causal", attrs={"unidirectional": 1}, kk=f32(b, s, d), vv=f32(b, s, dv))


def bert_cases(w):
    from onnxruntime.transformers import optimizer
    hidden, heads = 32, 4
    plain = bert_model(rng, layers=2, hidden=hidden, heads=heads)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bert.onnx")
        onnx.save(plain, path)
        fused = optimizer.optimize_model(path, model_type="bert", num_heads=heads,
                                         hidden_size=hidden, opt_level=0).model
    # The optimizer's in-memory model imports no com.microsoft opset (its save_model_to_file
    # adds one, as the files people publish have).
    if not any(i.domain == MS for i in fused.opset_import):
        fused.opset_import.append(helper.make_opsetid(MS, 1))
    ops = collections.Counter(n.op_type for n in fused.graph.node if n.domain == MS)
    for op in ("EmbedLayerNormalization", "Attention", "SkipLayerNormalization", "BiasGelu"):
        assert ops[op] > 0, f"the optimizer wrote no {op}: {dict(ops)}"
    b, s = 3, 9
    ids = rng.integers(0, 50, (b, s)).astype(np.int64)
    types = rng.integers(0, 2, (b, s)).astype(np.int64)
    mask = np.ones((b, s), np.int64)
    mask[1, 6:] = 0  # right padding (what the fused mask_index, key lengths, expresses)
    mask[2, 4:] = 0
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    expected = w.write("bert_plain", plain, feeds, rtol=1e-4, atol=2e-5)
    fused_out = w.write("bert_fused", fused, feeds, rtol=1e-4, atol=2e-5)
    np.testing.assert_allclose(fused_out[0], expected[0], rtol=1e-3, atol=1e-4)


def check_model(m, *args, **kwargs):
    """onnx's checker knows no SimplifiedLayerNormalization in the default domain (ONNX Runtime
    registers it there itself): models holding one are checked by ONNX Runtime's load alone."""
    if any(n.op_type == "SimplifiedLayerNormalization" and n.domain in ("", "ai.onnx")
           for n in m.graph.node):
        return
    _onnx_check_model(m, *args, **kwargs)


_onnx_check_model = ort_case.onnx.checker.check_model
ort_case.onnx.checker.check_model = check_model


def main():
    w = CaseWriter.from_args("contrib")
    activation_cases(w)
    skip_norm_cases(w)
    embed_cases(w)
    attention_cases(w)
    mha_cases(w)
    bert_cases(w)
    print(f"{w.count} contrib cases", file=sys.stderr)


if __name__ == "__main__":
    main()
