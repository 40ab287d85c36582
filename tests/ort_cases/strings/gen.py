"""String tensors against ONNX Runtime (docs/strings.md), on seeded random words:
  - StringNormalizer: LOWER / UPPER / NONE, case-sensitive and not, stopwords, [C] and [1, C],
    every word removed (ASCII words: see ASCII_WORDS);
  - StringConcat and Equal on strings with broadcasting; RegexFullMatch (anchors, classes,
    alternation, repetition); StringSplit with and without a delimiter, maxsplit;
  - Cast float / double / int64 / int32 / bool -> string on values whose shortest form is
    ONNX Runtime's too, string -> float / int64 (plain, scientific, INF, NaN, a fraction read into
    an integer); CastLike to string;
  - TfIdfVectorizer with pool_strings (TF, IDF, TFIDF, skips, unknown tokens, [N, C]);
  - ai.onnx.ml LabelEncoder opsets 2 to 4: string -> int64 / float, int64 -> string, the tensor
    attributes of opset 4, defaults;
  - data movement on strings: Gather, Transpose, Concat, Slice, Split, Expand, Tile, Where,
    Reshape, Squeeze, Unsqueeze, Identity, GatherElements.

References: ONNX Runtime (one thread, optimizations off)."""
import numpy as np
from onnx import TensorProto, helper

from ort_case import CaseWriter

rng = np.random.default_rng(41)
WORDS = ["the", "The", "a", "Cat", "dog", "DOG", "naïve", "Straße", "éclair", "x1", "hello",
         "World", "ünïcode", "SKY", "sky", "q"]
ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
             np.int32: TensorProto.INT32, np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL,
             np.object_: TensorProto.STRING}


# StringNormalizer's cases: ASCII only. ONNX Runtime maps case with the C library's locale
# (C.UTF-8 here, which leaves non-ASCII letters alone); inferd maps them with ICU.
ASCII_WORDS = [w for w in WORDS if w.isascii()]


def words(shape, pool=WORDS):
    return np.array(rng.choice(pool, size=shape), dtype=object)


def model(op, feeds, outputs, opset=20, domain="", inits=(), **attrs):
    """One `op` node over `feeds` (name -> array) plus initializers `inits` (TensorProtos)."""
    inputs = [helper.make_tensor_value_info(n, ONNX_TYPE[v.dtype.type], v.shape)
              for n, v in feeds.items()]
    names = list(feeds) + [t.name for t in inits]
    node = helper.make_node(op, names, [o for o, _ in outputs], domain=domain, **attrs)
    outs = [helper.make_tensor_value_info(o, t, None) for o, t in outputs]
    graph = helper.make_graph([node], op.lower(), inputs, outs, initializer=list(inits))
    opsets = [helper.make_opsetid("", opset if domain == "" else 20)]
    if domain:
        opsets.append(helper.make_opsetid(domain, opset))
    m = helper.make_model(graph, opset_imports=opsets)
    m.ir_version = 9
    return m, feeds


def main():
    w = CaseWriter.from_args("strings")
    S = TensorProto.STRING

    # ---- StringNormalizer ----
    k = 0
    for shape in ((9,), (1, 7)):
        for action in ("LOWER", "UPPER", "NONE"):
            for sensitive in (0, 1):
                for stops in ([], ["the", "dog", "SKY"]):
                    # locale C: ORT builds "<locale>.UTF-8" with the C library, whose en_US
                    # data a build machine may lack; C.UTF-8 is always there.
                    attrs = {"case_change_action": action, "is_case_sensitive": sensitive,
                             "locale": "C"}
                    if stops:
                        attrs["stopwords"] = stops
                    m, f = model("StringNormalizer", {"x": words(shape, ASCII_WORDS)}, [("y", S)],
                                 10, **attrs)
                    w.write(f"normalizer_{k}", m, f)
                    k += 1
    for shape in ((3,), (1, 2)):  # every word a stopword: one empty string
        x = np.array(["the", "The", "THE"][:shape[-1]], dtype=object).reshape(shape)
        m, f = model("StringNormalizer", {"x": x}, [("y", S)], 10, stopwords=["the"],
                     locale="C")
        w.write(f"normalizer_{k}", m, f)
        k += 1

    # ---- StringConcat, Equal ----
    for i, (a, b) in enumerate((((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1), (1, 5)), ((), (3,)))):
        m, f = model("StringConcat", {"a": words(a), "b": words(b)}, [("y", S)])
        w.write(f"concat_{i}", m, f)
        m, f = model("Equal", {"a": words(a), "b": words(b)}, [("y", TensorProto.BOOL)], 19)
        w.write(f"equal_{i}", m, f)

    # ---- RegexFullMatch ----
    texts = np.array(["alice@example.com", "bob@test.org", "not an email", "x@y", "",
                      "ABC123", "abc", "2024-01-31", "hello world", "naïve"], dtype=object)
    for i, pattern in enumerate((r"[a-z]+@[a-z]+\.(com|org)", r"[A-Z]+\d+", r".*o.*",
                                 r"\d{4}-\d{2}-\d{2}", r"", r"(hello|abc)( world)?",
                                 r"na.ve")):
        m, f = model("RegexFullMatch", {"x": texts.reshape(2, 5)}, [("y", TensorProto.BOOL)],
                     pattern=pattern)
        w.write(f"regex_{i}", m, f)

    # ---- StringSplit ----
    # No empty string and no tab: ONNX Runtime splits "" into no substrings and splits on spaces
    # only; inferd follows the ONNX reference (Python's str.split: [""] and every whitespace).
    lines = np.array(["a,b,,c", "z", "one", ",lead", "trail,", "x,y,z,w,v", "  spaced  out  ",
                      "two  spaces,, here"], dtype=object).reshape(2, 4)
    for i, attrs in enumerate(({"delimiter": ","}, {"delimiter": ",", "maxsplit": 1}, {},
                               {"maxsplit": 1}, {"delimiter": ",,"}, {"delimiter": " "})):
        m, f = model("StringSplit", {"x": lines}, [("y", S), ("z", TensorProto.INT64)], **attrs)
        w.write(f"split_{i}", m, f)

    # ---- Cast / CastLike ----
    floats = np.array([0.5, 0.25, 3.0, -1234.5, 0.125, np.inf, -np.inf, np.nan, 0.0, 100.0])
    for i, dtype in enumerate((np.float32, np.float64)):
        m, f = model("Cast", {"x": floats.astype(dtype)}, [("y", S)], 19, to=S)
        w.write(f"cast_float_string_{i}", m, f)
    for i, x in enumerate((np.array([-5, 0, 7, 2**40], np.int64), np.array([3, -9], np.int32),
                           np.array([True, False, True]))):
        m, f = model("Cast", {"x": x}, [("y", S)], 19, to=S)
        w.write(f"cast_to_string_{i}", m, f)
    text = np.array(["1.5", "-2.25e3", "INF", "-INF", "+INF", "NaN", "0", "1E-2", "42"],
                    dtype=object)
    for i, to in enumerate((TensorProto.FLOAT, TensorProto.DOUBLE)):
        m, f = model("Cast", {"x": text}, [("y", to)], 19, to=to)
        w.write(f"cast_from_string_{i}", m, f)
    ints = np.array(["15", "-7", "+3", "1.75", "-2.5", "9007199254740993"], dtype=object)
    m, f = model("Cast", {"x": ints}, [("y", TensorProto.INT64)], 19, to=TensorProto.INT64)
    w.write("cast_from_string_int64", m, f)
    like = np.array(["s"], dtype=object)
    m, f = model("CastLike", {"x": floats.astype(np.float32), "like": like}, [("y", S)], 19)
    w.write("castlike_string", m, f)

    # ---- TfIdfVectorizer with pool_strings ----
    pool = ["the", "cat", "dog", "sky", "the", "cat", "cat", "dog", "dog", "sky"]
    base = {"min_gram_length": 1, "max_gram_length": 2, "ngram_counts": [0, 4],
            "ngram_indexes": [0, 1, 2, 3, 4, 5, 6], "pool_strings": pool}
    idf = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    for i, (mode, skip, shape, weights) in enumerate((("TF", 0, (12,), None),
                                                      ("TF", 2, (2, 8), None),
                                                      ("IDF", 1, (3, 6), idf),
                                                      ("TFIDF", 3, (16,), [.5] * 7))):
        x = np.array(rng.choice(["the", "cat", "dog", "sky", "bird"], size=shape), dtype=object)
        attrs = dict(base, mode=mode, max_skip_count=skip)
        if weights:
            attrs["weights"] = weights
        m, f = model("TfIdfVectorizer", {"x": x}, [("y", TensorProto.FLOAT)], 9, **attrs)
        w.write(f"tfidf_{i}", m, f)

    # ---- LabelEncoder ----
    ml = "ai.onnx.ml"
    x = words((3, 4))
    m, f = model("LabelEncoder", {"x": x}, [("y", TensorProto.INT64)], 2, ml,
                 keys_strings=["the", "Cat", "dog", "sky"], values_int64s=[1, 2, 3, 4],
                 default_int64=-9)
    w.write("label_encoder_0", m, f)
    m, f = model("LabelEncoder", {"x": x}, [("y", TensorProto.FLOAT)], 2, ml,
                 keys_strings=["the", "Cat", "the"], values_floats=[1.5, 2.5, 3.5])
    w.write("label_encoder_1", m, f)
    ids = rng.integers(0, 6, size=(5,)).astype(np.int64)
    m, f = model("LabelEncoder", {"x": ids}, [("y", S)], 2, ml, keys_int64s=[0, 1, 2, 3],
                 values_strings=["zero", "one", "two", "three"], default_string="many")
    w.write("label_encoder_2", m, f)
    m, f = model("LabelEncoder", {"x": x}, [("y", TensorProto.INT64)], 4, ml,
                 keys_tensor=helper.make_tensor("k", S, [3], [b"the", b"dog", b"sky"]),
                 values_tensor=helper.make_tensor("v", TensorProto.INT64, [3], [7, 8, 9]),
                 default_tensor=helper.make_tensor("d", TensorProto.INT64, [1], [0]))
    w.write("label_encoder_3", m, f)
    fl = np.array([0.5, 1.5, np.nan, 2.0], np.float32)
    m, f = model("LabelEncoder", {"x": fl}, [("y", S)], 4, ml, keys_floats=[0.5, float("nan")],
                 values_strings=["half", "nan"], default_string="?")
    w.write("label_encoder_4", m, f)

    # ---- data movement on strings ----
    x = words((3, 4))
    i64 = TensorProto.INT64
    cases = [
        ("Gather", {"x": x, "i": np.array([2, 0, -1], np.int64)}, 13, {"axis": 0}),
        ("Gather", {"x": x, "i": np.array([[3, 1], [0, 0]], np.int64)}, 13, {"axis": 1}),
        ("Transpose", {"x": words((2, 3, 4))}, 13, {"perm": [2, 0, 1]}),
        ("Concat", {"x": x, "y": words((2, 4))}, 13, {"axis": 0}),
        ("Where", {"c": rng.random((3, 4)) < 0.5, "x": x, "y": words((4,))}, 16, {}),
        ("Squeeze", {"x": words((1, 3, 1))}, 11, {"axes": [0, 2]}),
        ("Unsqueeze", {"x": x}, 11, {"axes": [1]}),
        ("Identity", {"x": x}, 16, {}),
        ("Tile", {"x": x, "r": np.array([2, 1], np.int64)}, 13, {}),
        ("Expand", {"x": words((3, 1)), "s": np.array([2, 3, 4], np.int64)}, 13, {}),
        ("Slice", {"x": x, "s": np.array([1, 0], np.int64), "e": np.array([3, 4], np.int64),
                   "a": np.array([0, 1], np.int64), "st": np.array([1, 2], np.int64)}, 13, {}),
        ("Reshape", {"x": x, "s": np.array([2, -1], np.int64)}, 14, {}),
        ("GatherElements", {"x": x, "i": rng.integers(0, 3, size=(2, 4)).astype(np.int64)},
         13, {"axis": 0}),
    ]
    for i, (op, feeds, opset, attrs) in enumerate(cases):
        m, f = model(op, feeds, [("out", S)], opset, **attrs)
        expected = None
        if op == "Gather" and attrs["axis"] == 0:
            # ONNX Runtime 1.23 gives "" for all but the first string of each gathered row
            # (its string Gather copies one element per block): numpy is the reference here.
            expected = [np.take(feeds["x"], feeds["i"], axis=0)]
        w.write(f"move_{op.lower()}_{i}", m, f, expected=expected)
    m, f = model("Split", {"x": words((6, 2))}, [("y0", S), ("y1", S)], 13, axis=0)
    w.write("move_split", m, f)
    print(f"wrote {w.count} cases")


if __name__ == "__main__":
    main()
