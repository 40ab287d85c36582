"""Loop and Scan against ONNX Runtime on seeded random inputs: Loop as a for loop (trip count
only), a while loop (condition only, computed in the body), both, zero trips, early exit, a
loop-carried value whose shape grows each trip, outer-scope captures, a Loop nested in a Loop
body, and a recurrent cell written the way exporters write one (trip count from Shape/Gather,
a constant true condition passed through, Gather of step i from an outer tensor, MatMul + Tanh,
scan output through Unsqueeze); Scan over axes and directions with several scan inputs and
outputs (opsets 9, 11, 16). Opsets 11, 13, 16 and 19 for Loop.

References: ONNX Runtime (one thread, optimizations off)."""
import numpy as np
from onnx import TensorProto, helper

from ort_case import CaseWriter

rng = np.random.default_rng(29)
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def f32(*shape, scale=0.5):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def vi(name, t, shape=None):
    return helper.make_tensor_value_info(name, t, shape)


def model(nodes, inputs, outputs, opset, inits=()):
    g = helper.make_graph(nodes, "ctrl", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def affine_body(cond_from_body):
    """body(i, c, y): y' = y * a + x (a, x from the outer graph); scan s = Relu(y') + i;
    with `cond_from_body` the condition out is |ReduceSum(y')| + i < limit, else c passed through."""
    nodes = [
        helper.make_node("Mul", ["y_in", "a"], ["ya"]),
        helper.make_node("Add", ["ya", "x"], ["y_out"]),
        helper.make_node("Cast", ["i"], ["i_f"], to=F),
        helper.make_node("Relu", ["y_out"], ["r"]),
        helper.make_node("Add", ["r", "i_f"], ["s_out"]),
    ]
    if cond_from_body:
        # ReduceSum(y') + i < limit: the iteration number bounds the trips.
        nodes += [helper.make_node("ReduceSum", ["y_out"], ["total0"], keepdims=0),
                  helper.make_node("Abs", ["total0"], ["total1"]),
                  helper.make_node("Add", ["total1", "i_f"], ["total"]),
                  helper.make_node("Less", ["total", "limit"], ["c_out"])]
    else:
        nodes += [helper.make_node("Identity", ["c_in"], ["c_out"])]
    return helper.make_graph(
        nodes, "body",
        [vi("i", I64, []), vi("c_in", B, []), vi("y_in", F, [2, 3])],
        [vi("c_out", B, []), vi("y_out", F, [2, 3]), vi("s_out", F, [2, 3])])


def loop_forms(w):
    a, x, y0 = f32(2, 3), f32(2, 3), f32(2, 3)
    for opset in [11, 13, 16, 19]:
        for form in ["for", "while", "both"]:
            from_body = form != "for"
            ins = ["M" if form != "while" else "", "cond" if form != "for" else "", "y0"]
            node = helper.make_node("Loop", ins, ["y", "s"], body=affine_body(from_body))
            graph_in = [vi("y0", F, [2, 3]), vi("a", F, [2, 3]), vi("x", F, [2, 3]),
                        vi("limit", F, [])]
            feeds = {"y0": y0, "a": a, "x": x}
            if form != "while":
                graph_in.insert(0, vi("M", I64, []))
                feeds["M"] = np.array(7, dtype=np.int64)
            if form != "for":
                graph_in.insert(1 if form == "both" else 0, vi("cond", B, []))
                feeds["cond"] = np.array(True)
            m = model([node], graph_in, [vi("y", F, [2, 3]), vi("s", F)], opset)
            limits = [6.0, 1e9] if form == "both" else [6.0]
            for k, limit in enumerate(limits):
                feeds["limit"] = np.array(limit, dtype=np.float32)
                ordered = {i.name: feeds[i.name] for i in m.graph.input}
                w.write(f"loop{opset}_{form}_{k}", m, ordered)
    # Zero trips: M = 0, and cond = false.
    node = helper.make_node("Loop", ["M", "cond", "y0"], ["y", "s"], body=affine_body(True))
    m = model([node], [vi("M", I64, []), vi("cond", B, []), vi("y0", F, [2, 3]),
                       vi("a", F, [2, 3]), vi("x", F, [2, 3]), vi("limit", F, [])],
              [vi("y", F, [2, 3]), vi("s", F, [None, 2, 3])], 13)
    for k, (trips, cond) in enumerate([(0, True), (4, False)]):
        w.write(f"loop_zero_trips_{k}", m, {"M": np.array(trips, dtype=np.int64),
                                            "cond": np.array(cond), "y0": y0, "a": a, "x": x,
                                            "limit": np.array(5.0, dtype=np.float32)})


def loop_growing(w):
    """v grows by one element per trip (Concat with the iteration number): a carried value whose
    shape changes; the final sum is a second carried value."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["i_f"], to=F),
         helper.make_node("Unsqueeze", ["i_f", "zero"], ["i_1"]),
         helper.make_node("Mul", ["i_1", "scale"], ["i_s"]),
         helper.make_node("Concat", ["v_in", "i_s"], ["v_out"], axis=0),
         helper.make_node("ReduceSum", ["v_out"], ["t"], keepdims=1),
         helper.make_node("Add", ["t", "acc_in"], ["acc_out"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [vi("i", I64, []), vi("c_in", B, []), vi("v_in", F, [None]),
                 vi("acc_in", F, [1])],
        [vi("c_out", B, []), vi("v_out", F, [None]), vi("acc_out", F, [1])],
        [helper.make_tensor("zero", I64, [1], [0])])
    node = helper.make_node("Loop", ["M", "", "v0", "acc0"], ["v", "acc"], body=body)
    m = model([node], [vi("M", I64, []), vi("v0", F, [None]), vi("acc0", F, [1]),
                       vi("scale", F, [1])], [vi("v", F, [None]), vi("acc", F, [1])], 13)
    for k, trips in enumerate([1, 6]):
        w.write(f"loop_growing_{k}", m, {"M": np.array(trips, dtype=np.int64),
                                         "v0": f32(3), "acc0": f32(1),
                                         "scale": np.array([0.5], dtype=np.float32)})


def loop_nested(w):
    """A Loop inside a Loop body: the inner body reads the outer body's value and the graph's."""
    inner = helper.make_graph(
        [helper.make_node("Add", ["z_in", "y_in"], ["z1"]),
         helper.make_node("Mul", ["z1", "g"], ["z_out"]),
         helper.make_node("Identity", ["ci"], ["co"])],
        "inner", [vi("j", I64, []), vi("ci", B, []), vi("z_in", F, [3])],
        [vi("co", B, []), vi("z_out", F, [3])])
    outer = helper.make_graph(
        [helper.make_node("Loop", ["N", "", "y_in"], ["z"], body=inner),
         helper.make_node("Sub", ["z", "y_in"], ["y_out"]),
         helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Identity", ["z"], ["s_out"])],
        "outer", [vi("i", I64, []), vi("c_in", B, []), vi("y_in", F, [3])],
        [vi("c_out", B, []), vi("y_out", F, [3]), vi("s_out", F, [3])])
    node = helper.make_node("Loop", ["M", "", "y0"], ["y", "s"], body=outer)
    m = model([node], [vi("M", I64, []), vi("N", I64, []), vi("y0", F, [3]), vi("g", F, [3])],
              [vi("y", F, [3]), vi("s", F, [None, 3])], 13)
    w.write("loop_nested", m, {"M": np.array(3, dtype=np.int64),
                               "N": np.array(2, dtype=np.int64), "y0": f32(3),
                               "g": np.array([0.5, 0.9, 1.1], dtype=np.float32)})


def loop_exporter_rnn(w):
    """A recurrent cell as exporters write it: M = Shape(X)[0]; cond a constant true passed
    through; step i's input gathered from the outer X; h = Tanh(x_i W + h R + b); the scan
    output is Unsqueeze(h) (a [1, n, c] slice, stacked to [T, 1, n, c])."""
    t, n, i, c = 7, 2, 5, 4
    wt, rt, bt = f32(i, c), f32(c, c), f32(c)
    body = helper.make_graph(
        [helper.make_node("Gather", ["X", "it"], ["x_t"], axis=0),
         helper.make_node("MatMul", ["x_t", "W"], ["xw"]),
         helper.make_node("MatMul", ["h_in", "R"], ["hr"]),
         helper.make_node("Add", ["xw", "hr"], ["pre0"]),
         helper.make_node("Add", ["pre0", "b"], ["pre"]),
         helper.make_node("Tanh", ["pre"], ["h_out"]),
         helper.make_node("Unsqueeze", ["h_out", "ax0"], ["h_s"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "cell", [vi("it", I64, []), vi("c_in", B, []), vi("h_in", F, [n, c])],
        [vi("c_out", B, []), vi("h_out", F, [n, c]), vi("h_s", F, [1, n, c])],
        [helper.make_tensor("ax0", I64, [1], [0])])
    nodes = [
        helper.make_node("Shape", ["X"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["M"], axis=0),
        helper.make_node("Constant", [], ["true"], value=helper.make_tensor("t", B, [], [True])),
        helper.make_node("Loop", ["M", "true", "h0"], ["h", "hs"], body=body),
    ]
    inits = [helper.make_tensor("zero", I64, [], [0]),
             helper.make_tensor("W", F, [i, c], wt.ravel()),
             helper.make_tensor("R", F, [c, c], rt.ravel()),
             helper.make_tensor("b", F, [c], bt.ravel())]
    m = model(nodes, [vi("X", F, ["T", n, i]), vi("h0", F, [n, c])],
              [vi("h", F, [n, c]), vi("hs", F, ["T", 1, n, c])], 17, inits)
    for k, steps in enumerate([t, 1]):
        w.write(f"loop_exporter_rnn_{k}", m, {"X": f32(steps, n, i, scale=1.0), "h0": f32(n, c)})


def scan_cases(w):
    """Scan: a running sum and a running product over two scan inputs, each along its axis and
    direction; two scan outputs along their axes and directions."""
    x, z = f32(3, 4, 2), f32(4, 3, 2, scale=0.3)
    z = z + 1.0
    for opset in [9, 11, 16]:
        for in_axes, in_dirs in [([0, 1], [0, 0]), ([0, 1], [1, 0]), ([2 - 2, -2], [0, 1])]:
            for out_axes, out_dirs in [([0, 0], [0, 0]), ([1, -1], [1, 0])]:
                if opset == 9 and any(a < 0 for a in in_axes + out_axes):
                    continue  # negative axes are opset 11
                body = helper.make_graph(
                    [helper.make_node("Add", ["s_in", "xs"], ["s_out"]),
                     helper.make_node("Mul", ["p_in", "zs"], ["p_out"]),
                     helper.make_node("Sub", ["s_out", "p_out"], ["d"]),
                     helper.make_node("Identity", ["xs"], ["x_copy"])],
                    "body", [vi("s_in", F, [4, 2]), vi("p_in", F, [4, 2]),
                             vi("xs", F, [4, 2]), vi("zs", F, [4, 2])],
                    [vi("s_out", F, [4, 2]), vi("p_out", F, [4, 2]), vi("d", F, [4, 2]),
                     vi("x_copy", F, [4, 2])])
                attrs = dict(num_scan_inputs=2, scan_input_axes=in_axes,
                             scan_output_axes=out_axes)
                if opset > 8:
                    attrs.update(scan_input_directions=in_dirs,
                                 scan_output_directions=out_dirs)
                node = helper.make_node("Scan", ["s0", "p0", "x", "z"],
                                        ["s", "p", "ds", "xc"], body=body, **attrs)
                m = model([node], [vi("s0", F, [4, 2]), vi("p0", F, [4, 2]),
                                   vi("x", F, [3, 4, 2]), vi("z", F, [4, 3, 2])],
                          [vi("s", F, [4, 2]), vi("p", F, [4, 2]), vi("ds", F), vi("xc", F)],
                          opset)
                tag = (f"scan{opset}_in{''.join(map(str, in_dirs))}"
                       f"_ax{'_'.join(map(str, in_axes))}_out{'_'.join(map(str, out_axes))}"
                       f"d{''.join(map(str, out_dirs))}").replace("-", "m")
                w.write(tag, m, {"s0": f32(4, 2), "p0": f32(4, 2), "x": x, "z": z})


if __name__ == "__main__":
    w = CaseWriter.from_args("ctrl")
    loop_forms(w)
    loop_growing(w)
    loop_nested(w)
    loop_exporter_rnn(w)
    scan_cases(w)
    print(f"wrote {w.count} cases")
