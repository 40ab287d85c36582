"""What inferd lacks to run a model, found without running it: every (operator, opset, element
type) in the model, subgraphs included, that no kernel of `inferctl ops --json` covers.

inferd's loader stops at the first problem; this lists them all, so one missing kernel does not
hide the next. Types come from onnx shape inference (the element type of the input the kernel
registry dispatches on, `type_input`); "?" where inference cannot tell. Runs under the test venv
(onnx).

Example:
  kernels = load_kernels("bazel-bin/tools/inferctl/inferctl")
  for gap in model_gaps("model.onnx", kernels): print(gap)   # "ai.onnx::LSTM (opset 16)"
"""

import json
import subprocess

import onnx
from onnx import defs, helper, shape_inference

# Operators the engine runs itself, not through a registered kernel: Constant becomes an
# initializer at load (engine/model.cc), If is an engine kernel (engine/device_copies.cc).
ENGINE_OPS = {("ai.onnx", "Constant"), ("ai.onnx", "If")}


def load_kernels(inferctl):
    """(domain, op) -> [(since, end, types, type_input)] from `inferctl ops --json`."""
    out = subprocess.run([inferctl, "ops", "--json"], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    kernels = {}
    for k in json.loads(out):
        kernels.setdefault((k["domain"], k["op"]), []).append(
            (k["since_version"], k["end_version"], set(k["types"]), k.get("type_input", 0)))
    return kernels


def _type_name(elem_type):
    if elem_type == onnx.TensorProto.BFLOAT16:
        return "bfloat16"
    try:
        return helper.tensor_dtype_to_np_dtype(elem_type).name
    except (KeyError, ValueError, TypeError):
        return "?"


def _types_of(graph, types):
    for v in list(graph.input) + list(graph.output) + list(graph.value_info):
        if v.type.HasField("tensor_type") and v.type.tensor_type.elem_type:
            types[v.name] = _type_name(v.type.tensor_type.elem_type)
    for init in graph.initializer:
        types[init.name] = _type_name(init.data_type)
    for node in graph.node:
        if node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value":
                    types[node.output[0]] = _type_name(a.t.data_type)


def _version(op, domain, opset):
    """The operator's version in force at the model's opset (the since_version of its schema):
    Add at opset 18 is Add-14, so a kernel for 14 covers it; ReduceMean at 18 is ReduceMean-18."""
    try:
        return defs.get_schema(op, opset, "" if domain == "ai.onnx" else domain).since_version
    except Exception:  # noqa: BLE001  an operator onnx does not know (contrib domains)
        return opset


def _walk(graph, opsets, kernels, types, gaps):
    _types_of(graph, types)
    for node in graph.node:
        domain = node.domain or "ai.onnx"
        if (domain, node.op_type) not in ENGINE_OPS:
            gap = _node_gap(node, domain, opsets, kernels, types)
            if gap:
                gaps.add(gap)
        for a in node.attribute:
            for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else
                      list(a.graphs) if a.type == onnx.AttributeProto.GRAPHS else []):
                _walk(g, opsets, kernels, types, gaps)


def _node_gap(node, domain, opsets, kernels, types):
    opset = opsets.get(domain, 0)
    version = _version(node.op_type, domain, opset)
    entries = kernels.get((domain, node.op_type), [])
    in_range = [e for e in entries if e[0] <= version <= e[1]]
    name = "%s::%s" % (domain, node.op_type)
    if not entries:
        return "%s (no kernel)" % name
    if not in_range:
        return "%s (version %d at opset %d; kernels for %s)" % (
            name, version, opset, ", ".join("%d-%d" % (e[0], e[1]) for e in sorted(entries)))
    _, _, supported, type_input = in_range[0]
    t = types.get(node.input[type_input], "?") if type_input < len(node.input) else "?"
    if t != "?" and t not in supported:
        return "%s (type %s)" % (name, t)
    return None


def model_gaps(path, kernels):
    """Sorted list of what inferd lacks for the model at `path` (empty: every node has a
    kernel for its opset and type)."""
    model = onnx.load(path)
    try:
        model = shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001  types then come only from what the file declares
        pass
    opsets = {(o.domain or "ai.onnx"): o.version for o in model.opset_import}
    gaps = set()
    _walk(model.graph, opsets, kernels, {}, gaps)
    return sorted(gaps)
