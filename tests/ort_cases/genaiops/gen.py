"""The onnxruntime-genai model builder's operators against ONNX Runtime on seeded random inputs:
com.microsoft MatMulNBits (block sizes 16..256, K not a multiple of the block, zero points
absent / packed uint8 / float, bias, M = 1 and larger), RotaryEmbedding (3-D and 4-D input,
interleaved, partial rotary dim, position ids and offset), GatherBlockQuantized (int4 and int8 tables,
zero points, int32 / int64 / negative indices), SimplifiedLayerNormalization (axis,
inv_std_var), SkipSimplifiedLayerNormalization (bias, input_skip_bias_sum; ORT leaves its
inv_std_var unset), and
GroupQueryAttention (prefill, decode into a longer buffer, a second prompt chunk, rotary,
local window, softcap, packed QKV, uneven sequence lengths).

References: ONNX Runtime (one thread, optimizations off). Most MatMulNBits cases leave
accuracy_level at 0 (float32); the mnb_acc4_* cases set 4, where both ORT and inferd quantize A
to int8 per block for M <= 4 (the same scheme: ORT 1.23 is within 1e-5 of it, so the same
tolerance as the float cases).
GroupQueryAttention's present outputs are compared only where every position of the buffer is
defined (ORT leaves a buffer's unused tail unset)."""
import numpy as np
from onnx import TensorProto, defs, helper, numpy_helper

from ort_case import CaseWriter

rng = np.random.default_rng(29)
MS = "com.microsoft"
F = TensorProto.FLOAT


def register_simplified_ln_schema():
    """ORT registers SimplifiedLayerNormalization in the default domain (version 1); onnx does
    not know it, so its checker (ort_case.write) needs the schema (as inferd's loader does,
    engine/genai_schemas.cc)."""
    if defs.has("SimplifiedLayerNormalization"):
        return
    P = defs.OpSchema.FormalParameter
    floats = ["tensor(float)", "tensor(float16)", "tensor(double)", "tensor(bfloat16)"]
    defs.register_schema(defs.OpSchema(
        "SimplifiedLayerNormalization", "", 1,
        inputs=[P("X", "T"), P("scale", "V")],
        outputs=[P("Y", "V"),
                 P("inv_std_var", "U", param_option=defs.OpSchema.FormalParameterOption.Optional)],
        type_constraints=[("T", floats, ""), ("V", floats, ""),
                          ("U", ["tensor(float)", "tensor(double)"], "")],
        attributes=[defs.OpSchema.Attribute(n, t, "", required=False) for n, t in
                    [("axis", defs.OpSchema.AttrType.INT),
                     ("epsilon", defs.OpSchema.AttrType.FLOAT),
                     ("stash_type", defs.OpSchema.AttrType.INT)]]))


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def model(nodes, inputs, outputs, initializers=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21),
                                            helper.make_opsetid(MS, 1)])
    m.ir_version = 10
    return m


def vi(name, arr_or_type, shape=None):
    if shape is None:
        arr = arr_or_type
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(arr.dtype),
                                             arr.shape)
    return helper.make_tensor_value_info(name, arr_or_type, shape)


def matmul_nbits(w, name, m, k, n, block, zp="none", bias=False, lead=None, level=0):
    blocks = (k + block - 1) // block
    b = rng.integers(0, 256, size=(n, blocks, block // 2), dtype=np.uint8)
    scales = rng.uniform(0.01, 0.2, size=(n * blocks,)).astype(np.float32)
    inits = [numpy_helper.from_array(b, "B"), numpy_helper.from_array(scales, "scales")]
    names = ["A", "B", "scales"]
    if zp == "packed":
        z = rng.integers(0, 256, size=(n * ((blocks + 1) // 2),), dtype=np.uint8)
        inits.append(numpy_helper.from_array(z, "zp"))
        names.append("zp")
    elif zp == "float":
        z = rng.uniform(0, 15, size=(n * blocks,)).astype(np.float32)
        inits.append(numpy_helper.from_array(z, "zp"))
        names.append("zp")
    if bias:
        names += [""] * (5 - len(names)) + ["bias"]
        inits.append(numpy_helper.from_array(f32(n), "bias"))
    shape = (lead or [m]) + [k]
    a = f32(*shape)
    node = helper.make_node("MatMulNBits", names, ["Y"], domain=MS, K=k, N=n, bits=4,
                            block_size=block, accuracy_level=level)
    out_shape = shape[:-1] + [n]
    w.write(name, model([node], [vi("A", a)], [vi("Y", F, out_shape)], inits), {"A": a},
            rtol=1e-4, atol=1e-4)


def gather_block_quantized(w, name, lead, cols, block, bits=4, zp=False, indices=(2, 3),
                           index_type=np.int64, negative=False):
    """An int4 / int8 table (uint8 data, rows first, quantized along the last axis)."""
    per_byte = 2 if bits == 4 else 1
    blocks = (cols + block - 1) // block
    data = rng.integers(0, 256, size=tuple(lead) + (cols // per_byte,), dtype=np.uint8)
    scales = rng.uniform(0.01, 0.2, size=tuple(lead) + (blocks,)).astype(np.float32)
    inits = [numpy_helper.from_array(data, "data"), numpy_helper.from_array(scales, "scales")]
    names = ["data", "idx", "scales"]
    if zp:
        z = rng.integers(0, 256, size=tuple(lead) + ((blocks + per_byte - 1) // per_byte,),
                         dtype=np.uint8)
        inits.append(numpy_helper.from_array(z, "zp"))
        names.append("zp")
    rows = lead[0]
    idx = rng.integers(-rows if negative else 0, rows, size=indices).astype(index_type)
    node = helper.make_node("GatherBlockQuantized", names, ["Y"], domain=MS, bits=bits,
                            block_size=block, gather_axis=0, quantize_axis=len(lead))
    out_shape = list(indices) + list(lead[1:]) + [cols]
    w.write(name, model([node], [vi("idx", idx)], [vi("Y", F, out_shape)], inits), {"idx": idx},
            rtol=1e-6, atol=1e-6)


def rotary(w, name, four_d, interleaved, rotary_dim=0, offset=False, b=2, s=3, heads=2,
           head=16, max_pos=32):
    half = (rotary_dim or head) // 2
    x = f32(b, heads, s, head) if four_d else f32(b, s, heads * head)
    pos = (np.array([7], dtype=np.int64) if offset
           else rng.integers(0, max_pos, size=(b, s)).astype(np.int64))
    cos, sin = f32(max_pos, half), f32(max_pos, half)
    attrs = {"interleaved": int(interleaved)}
    if rotary_dim:
        attrs.update(rotary_embedding_dim=rotary_dim, num_heads=heads)
    node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain=MS,
                            **attrs)
    feeds = {"x": x, "pos": pos, "cos": cos, "sin": sin}
    w.write(name, model([node], [vi(k, v) for k, v in feeds.items()], [vi("y", F, x.shape)]),
            feeds)


def simplified_ln(w, name, shape, axis=-1, eps=1e-5, stats=False):
    x = f32(*shape)
    a = axis % len(shape)
    scale = f32(*shape[a:])
    outs = ["y", "inv"] if stats else ["y"]
    node = helper.make_node("SimplifiedLayerNormalization", ["x", "scale"], outs, axis=axis,
                            epsilon=eps)
    stat_shape = list(shape[:a]) + [1] * (len(shape) - a)
    outputs = [vi("y", F, shape)] + ([vi("inv", F, stat_shape)] if stats else [])
    feeds = {"x": x, "scale": scale}
    w.write(name, model([node], [vi("x", x), vi("scale", scale)], outputs), feeds)


def skip_simplified_ln(w, name, shape, skip_shape=None, bias=False, outputs=("y",), eps=None):
    x, skip, gamma = f32(*shape), f32(*(skip_shape or shape)), f32(shape[-1])
    ins = ["x", "skip", "gamma"] + (["bias"] if bias else [])
    feeds = {"x": x, "skip": skip, "gamma": gamma}
    if bias:
        feeds["bias"] = f32(shape[-1])
    slot = {"y": 0, "inv": 2, "sum": 3}
    names = [""] * 4
    for o in outputs:
        names[slot[o]] = o
    while names[-1] == "":
        names.pop()
    attrs = {} if eps is None else {"epsilon": eps}
    node = helper.make_node("SkipSimplifiedLayerNormalization", ins, names, domain=MS, **attrs)
    out_shapes = {"y": list(shape), "inv": list(shape[:-1]) + [1], "sum": list(shape)}
    w.write(name, model([node], [vi(k, v) for k, v in feeds.items()],
                        [vi(o, F, out_shapes[o]) for o in outputs]), feeds)


def gqa(w, name, b=2, s=1, heads=4, kv=2, head=16, past=0, seqlens=None, total=None,
        rotary=False, interleaved=False, window=-1, softcap=0.0, packed=False,
        with_present=True, max_pos=64):
    total = total if total is not None else past + s
    seqlens = seqlens if seqlens is not None else [total - 1] * b
    q, k, v = f32(b, s, heads * head), f32(b, s, kv * head), f32(b, s, kv * head)
    feeds = {}
    if packed:
        feeds["qkv"] = np.concatenate([q, k, v], axis=2)
        ins = ["qkv", "", ""]
    else:
        feeds.update(q=q, k=k, v=v)
        ins = ["q", "k", "v"]
    if past:
        feeds["pk"], feeds["pv"] = f32(b, kv, past, head), f32(b, kv, past, head)
        ins += ["pk", "pv"]
    else:
        ins += ["", ""]
    feeds["seqlens_k"] = np.array(seqlens, dtype=np.int32)
    feeds["total"] = np.array(total, dtype=np.int32)
    ins += ["seqlens_k", "total"]
    attrs = dict(num_heads=heads, kv_num_heads=kv)
    if rotary:
        feeds["cos"], feeds["sin"] = f32(max_pos, head // 2), f32(max_pos, head // 2)
        ins += ["cos", "sin"]
        attrs.update(do_rotary=1, rotary_interleaved=int(interleaved))
    if window > 0:
        attrs["local_window_size"] = window
    if softcap:
        attrs["softcap"] = softcap
    node = helper.make_node("GroupQueryAttention", ins, ["out", "present_k", "present_v"],
                            domain=MS, **attrs)
    present = max(total, past)
    outputs = [vi("out", F, [b, s, heads * head])]
    if with_present:
        outputs += [vi("present_k", F, [b, kv, present, head]),
                    vi("present_v", F, [b, kv, present, head])]
    w.write(name, model([node], [vi(k_, v_) for k_, v_ in feeds.items()], outputs), feeds,
            rtol=1e-4, atol=2e-5)


def main():
    w = CaseWriter.from_args("genaiops")
    register_simplified_ln_schema()
    # MatMulNBits: the decode path (M <= 4) and the dequantize + sgemm path.
    matmul_nbits(w, "mnb_m1_b32", 1, 256, 48, 32)
    matmul_nbits(w, "mnb_m1_b16_packed_zp", 1, 128, 40, 16, zp="packed")
    matmul_nbits(w, "mnb_m1_b64_float_zp_bias", 1, 320, 24, 64, zp="float", bias=True)
    matmul_nbits(w, "mnb_m1_b128_k_tail", 1, 300, 32, 128, zp="packed")
    matmul_nbits(w, "mnb_m1_b256", 1, 1024, 16, 256, zp="packed", bias=True)
    matmul_nbits(w, "mnb_m3_k_tail", 3, 100, 20, 32, zp="packed")
    matmul_nbits(w, "mnb_m17_prefill", 17, 256, 160, 32, zp="packed", bias=True)
    matmul_nbits(w, "mnb_m9_float_zp", 9, 200, 33, 64, zp="float")
    matmul_nbits(w, "mnb_batched_3d", 0, 128, 24, 32, zp="packed", lead=[2, 5])
    # accuracy_level 4: int8 A per block (M <= 4; above that inferd computes in float32, ORT
    # still in int8, so no case there). Float zero points: float32 in both.
    matmul_nbits(w, "mnb_acc4_m1_b32", 1, 512, 64, 32, level=4)
    matmul_nbits(w, "mnb_acc4_m1_b32_packed_zp_bias", 1, 256, 40, 32, zp="packed", bias=True,
                 level=4)
    matmul_nbits(w, "mnb_acc4_m2_b64_k_tail", 2, 300, 24, 64, zp="packed", level=4)
    matmul_nbits(w, "mnb_acc4_m3_b128", 3, 384, 20, 128, level=4)
    matmul_nbits(w, "mnb_acc4_m4_b32_k_tail", 4, 100, 33, 32, zp="packed", bias=True, level=4)
    matmul_nbits(w, "mnb_acc4_m1_b16", 1, 128, 16, 16, zp="packed", level=4)
    matmul_nbits(w, "mnb_acc4_m4_float_zp", 4, 256, 16, 32, zp="float", level=4)
    # GatherBlockQuantized: the builder's int4 token embeddings (tied to lm_head).
    gather_block_quantized(w, "gbq_int4_b32", [40], 64, 32)
    gather_block_quantized(w, "gbq_int4_b16_zp_int32_idx", [24], 96, 16, zp=True,
                           index_type=np.int32)
    gather_block_quantized(w, "gbq_int4_col_tail_negative", [30], 80, 32, zp=True,
                           negative=True, indices=(5,))
    gather_block_quantized(w, "gbq_int8_b64", [20], 128, 64, bits=8, indices=(1, 4))
    gather_block_quantized(w, "gbq_int8_zp_3d", [6, 3], 48, 16, bits=8, zp=True)
    # RotaryEmbedding.
    rotary(w, "rope_3d", False, False)
    rotary(w, "rope_3d_interleaved", False, True)
    rotary(w, "rope_3d_partial", False, False, rotary_dim=8)
    rotary(w, "rope_4d", True, False)
    rotary(w, "rope_4d_interleaved_partial", True, True, rotary_dim=8)
    rotary(w, "rope_offset", False, False, offset=True)
    # RMS normalization.
    simplified_ln(w, "sln_last", [2, 3, 16])
    simplified_ln(w, "sln_axis1_stats", [2, 3, 8], axis=1, eps=1e-6, stats=True)
    skip_simplified_ln(w, "ssln", [2, 3, 16])
    skip_simplified_ln(w, "ssln_bias_all_outputs", [2, 3, 16], bias=True,
                       outputs=("y", "sum"), eps=1e-6)
    skip_simplified_ln(w, "ssln_sum_only", [1, 4, 32], outputs=("y", "sum"))
    skip_simplified_ln(w, "ssln_2d", [6, 16], bias=True, outputs=("y", "sum"))
    # GroupQueryAttention.
    gqa(w, "gqa_prefill", s=5)
    gqa(w, "gqa_prefill_rotary", s=5, rotary=True)
    gqa(w, "gqa_prefill_rotary_interleaved_packed", s=4, rotary=True, interleaved=True,
        packed=True)
    gqa(w, "gqa_decode", s=1, past=6)
    gqa(w, "gqa_decode_rotary", s=1, past=7, rotary=True)
    gqa(w, "gqa_decode_window", s=1, past=9, window=4)
    gqa(w, "gqa_decode_softcap", s=1, past=5, softcap=3.0)
    gqa(w, "gqa_decode_mqa", s=1, past=5, heads=4, kv=1)
    gqa(w, "gqa_second_chunk", b=1, s=3, past=4, rotary=True)
    gqa(w, "gqa_prefill_window", s=8, window=3)
    # Decode into a buffer longer than the sequences (the builder's shared buffer): only the
    # attention output is compared (the buffer's tail is unset in ORT).
    gqa(w, "gqa_decode_buffer_uneven", s=1, past=12, total=8, seqlens=[7, 4], rotary=True,
        with_present=False)
    print(f"genaiops: {w.count} cases")


if __name__ == "__main__":
    main()
