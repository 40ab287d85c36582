"""The numeric ai.onnx.ml operators (kernels/cpu/ml_ops.cc, tree_ensemble.cc) against ONNX
Runtime: Binarizer, ArrayFeatureExtractor (1-D, 2-D and 3-D X, repeated indices), Scaler (one
value and one per feature, int64 X), Normalizer (MAX, L1, L2, negative rows, a zero row, a row
whose maximum is 0), LinearRegressor (one and three targets, with and without intercepts),
TreeEnsembleRegressor (tree_cases) and TreeEnsemble (tree5_cases). ORT's Binarizer and
LinearRegressor take float32 only; inferd's also take float64, int32 and int64 (the spec's
types)."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from ort_case import CaseWriter

rng = np.random.default_rng(41)
ML = "ai.onnx.ml"
TYPES = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
         np.int64: TensorProto.INT64, np.int32: TensorProto.INT32}


def model(op, inputs, out_type, **attrs):
    """One ai.onnx.ml node; `inputs` (name, numpy array) are graph inputs."""
    node = helper.make_node(op, [n for n, _ in inputs], ["y"], domain=ML, **attrs)
    g = helper.make_graph(
        [node], op.lower(),
        [helper.make_tensor_value_info(n, TYPES[v.dtype.type], v.shape) for n, v in inputs],
        [helper.make_tensor_value_info("y", out_type, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid(ML, 3)])
    m.ir_version = 8
    return m


def x_of(dtype, shape):
    if dtype in (np.int64, np.int32):
        return rng.integers(-20, 20, size=shape).astype(dtype)
    return rng.normal(0, 3, size=shape).astype(dtype)


def tree_attrs(n_trees, depth, features, targets, modes):
    """Full binary trees of `depth` (node ids 0.. in breadth-first order, root first), random
    features and thresholds (integers, so BRANCH_EQ / NEQ hit), every leaf weighting every
    target."""
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes",
                         "nodes_values", "nodes_truenodeids", "nodes_falsenodeids",
                         "nodes_missing_value_tracks_true", "target_treeids", "target_nodeids",
                         "target_ids", "target_weights")}
    for t in range(n_trees):
        for i in range(2 ** (depth + 1) - 1):
            leaf = i >= 2 ** depth - 1
            a["nodes_treeids"].append(t)
            a["nodes_nodeids"].append(i)
            a["nodes_featureids"].append(0 if leaf else int(rng.integers(0, features)))
            a["nodes_modes"].append("LEAF" if leaf else str(rng.choice(modes)))
            a["nodes_values"].append(0.0 if leaf else float(rng.integers(-2, 3)))
            a["nodes_truenodeids"].append(0 if leaf else 2 * i + 1)
            a["nodes_falsenodeids"].append(0 if leaf else 2 * i + 2)
            a["nodes_missing_value_tracks_true"].append(int(rng.integers(0, 2)))
            if leaf:
                for k in range(targets):
                    a["target_treeids"].append(t)
                    a["target_nodeids"].append(i)
                    a["target_ids"].append(k)
                    a["target_weights"].append(float(rng.normal(0, 1)))
    return a


def tree_cases(w):
    """TreeEnsembleRegressor: every branch mode, NaN features (missing_value_tracks_true both
    ways), each aggregate_function, base_values, post_transform NONE / LOGISTIC / SOFTMAX."""
    all_modes = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]
    for agg in ("SUM", "AVERAGE", "MIN", "MAX"):
        for post in ("NONE", "LOGISTIC", "SOFTMAX"):
            if post != "NONE" and agg not in ("SUM",):
                continue
            attrs = tree_attrs(3, 3, 4, 2, all_modes)
            attrs.update(n_targets=2, aggregate_function=agg, post_transform=post,
                         base_values=[0.5, -1.0])
            x = rng.integers(-3, 4, size=(16, 4)).astype(np.float32)
            x[::5, 1] = np.nan
            w.write(f"tree_ensemble_regressor_{agg.lower()}_{post.lower()}",
                    model("TreeEnsembleRegressor", [("x", x)], TensorProto.FLOAT, **attrs),
                    {"x": x})
    attrs = tree_attrs(1, 2, 3, 1, ["BRANCH_LEQ"])
    attrs.update(n_targets=1)
    x = rng.normal(0, 2, size=(7, 3)).astype(np.float32)
    w.write("tree_ensemble_regressor_one_tree",
            model("TreeEnsembleRegressor", [("x", x)], TensorProto.FLOAT, **attrs), {"x": x})


def tree5_model(x, n_trees, depth, targets, aggregate):
    """TreeEnsemble (ai.onnx.ml 5): full binary trees of `depth` interior levels, every mode
    (MEMBER with a set of 1-3 integers), one (target, weight) per leaf."""
    splits, feats, modes, tids, fids, tleaf, fleaf, missing, members = ([] for _ in range(9))
    leaf_targets, leaf_weights, roots = [], [], []
    inner = 2 ** depth - 1
    for _ in range(n_trees):
        base, leaf_base = len(splits), len(leaf_targets)
        roots.append(base)
        for i in range(inner):
            mode = int(rng.integers(0, 7))
            modes.append(mode)
            splits.append(float(rng.integers(-2, 3)))
            feats.append(int(rng.integers(0, x.shape[1])))
            missing.append(int(rng.integers(0, 2)))
            if mode == 6:
                members.extend(float(v) for v in rng.choice(np.arange(-3, 4), size=int(
                    rng.integers(1, 4)), replace=False))
                members.append(np.nan)
            for child, ids, leafs in ((2 * i + 1, tids, tleaf), (2 * i + 2, fids, fleaf)):
                if child >= inner:
                    ids.append(leaf_base + child - inner)
                    leafs.append(1)
                else:
                    ids.append(base + child)
                    leafs.append(0)
        for _ in range(inner + 1):
            leaf_targets.append(int(rng.integers(0, targets)))
            leaf_weights.append(float(rng.normal(0, 1)))
    dt = x.dtype
    attrs = dict(
        nodes_splits=numpy_helper.from_array(np.array(splits, dt)),
        nodes_featureids=feats, nodes_modes=numpy_helper.from_array(np.array(modes, np.uint8)),
        nodes_truenodeids=tids, nodes_falsenodeids=fids, nodes_trueleafs=tleaf,
        nodes_falseleafs=fleaf, nodes_missing_value_tracks_true=missing,
        leaf_targetids=leaf_targets,
        leaf_weights=numpy_helper.from_array(np.array(leaf_weights, dt)), tree_roots=roots,
        n_targets=targets, aggregate_function=aggregate, post_transform=0)
    if members:
        attrs["membership_values"] = numpy_helper.from_array(np.array(members, dt))
    node = helper.make_node("TreeEnsemble", ["x"], ["y"], domain=ML, **attrs)
    g = helper.make_graph([node], "te5", [helper.make_tensor_value_info("x", TYPES[dt.type],
                                                                        x.shape)],
                          [helper.make_tensor_value_info("y", TYPES[dt.type], None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21),
                                            helper.make_opsetid(ML, 5)])
    m.ir_version = 10
    return m


def tree5_cases(w):
    """TreeEnsemble (ml opset 5): every mode including MEMBER, NaN features, each aggregate
    (0 AVERAGE, 1 SUM, 2 MIN, 3 MAX), float32 and float64."""
    for aggregate in (0, 1, 2, 3):
        for dtype in (np.float32, np.float64):
            x = rng.integers(-3, 4, size=(16, 4)).astype(dtype)
            x[::5, 2] = np.nan
            w.write(f"tree_ensemble5_agg{aggregate}_{dtype.__name__}",
                    tree5_model(x, 3, 3, 2, aggregate), {"x": x})


def main():
    w = CaseWriter.from_args("ml")
    for dtype in (np.float32,):  # ORT's Binarizer takes float32 only
        x = x_of(dtype, (4, 5))
        w.write(f"binarizer_{dtype.__name__}",
                model("Binarizer", [("x", x)], TYPES[dtype], threshold=0.5), {"x": x})
    for dtype, shape in ((np.float32, (3, 6)), (np.int64, (2, 3, 6)), (np.float64, (6,))):
        x = x_of(dtype, shape)
        idx = np.array([5, 0, 2, 2], np.int64)
        w.write(f"array_feature_extractor_{len(shape)}d",
                model("ArrayFeatureExtractor", [("x", x), ("i", idx)], TYPES[dtype]),
                {"x": x, "i": idx})
    for name, offset, scale in (("single", [1.5], [0.5]),
                                ("per_feature", [0.0, 1.0, -2.0, 3.0], [1.0, 2.0, 0.5, -1.0])):
        for dtype in (np.float32, np.int64):
            x = x_of(dtype, (3, 4))
            w.write(f"scaler_{name}_{dtype.__name__}",
                    model("Scaler", [("x", x)], TensorProto.FLOAT, offset=offset, scale=scale),
                    {"x": x})
    for norm in ("MAX", "L1", "L2"):
        x = x_of(np.float32, (4, 5))
        x[2] = 0
        x[1] = -np.abs(x[1])  # MAX divides by the (negative) maximum
        x[3, 0], x[3, 1:] = 0, -np.abs(x[3, 1:])  # MAX: a zero maximum leaves the row
        w.write(f"normalizer_{norm.lower()}",
                model("Normalizer", [("x", x)], TensorProto.FLOAT, norm=norm), {"x": x})
        xi = x_of(np.int64, (3, 4))
        w.write(f"normalizer_{norm.lower()}_int64",
                model("Normalizer", [("x", xi)], TensorProto.FLOAT, norm=norm), {"x": xi})
    for targets in (1, 3):
        for intercepts in (False, True):
            for dtype in (np.float32,):  # ORT's LinearRegressor takes float32 only
                attrs = {"targets": targets,
                         "coefficients": rng.normal(0, 1, targets * 4).astype(np.float32).tolist()}
                if intercepts:
                    attrs["intercepts"] = rng.normal(0, 1, targets).astype(np.float32).tolist()
                x = x_of(dtype, (5, 4))
                w.write(f"linear_regressor_t{targets}{'_b' if intercepts else ''}_"
                        f"{dtype.__name__}",
                        model("LinearRegressor", [("x", x)], TensorProto.FLOAT, **attrs),
                        {"x": x})
    tree_cases(w)
    tree5_cases(w)
    print(f"wrote {w.count} cases")


if __name__ == "__main__":
    main()
