#!/bin/bash
# `inferctl check`: the mlp example can run (exit 0, its operators and static plan); a model with
# two nodes of an operator inferd lacks and a Conv in float64 cannot (exit 1), and the report
# names both reasons at once with their nodes; a missing file is refused.
set -u
inferctl="$1" mlp="$2"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
out="$("$inferctl" check "$mlp")" || fail "check of mlp exited $?: $out"
grep -q "can run: yes" <<<"$out" || fail "no 'can run: yes': $out"
grep -q "MatMul x" <<<"$out" || fail "no operator counts: $out"
grep -q "static plan" <<<"$out" || fail "no static plan line: $out"

tmp="${TEST_TMPDIR:-$(mktemp -d)}"
/usr/bin/python3 - "$tmp/bad.onnx" <<'PY' || fail "could not write the test model"
import sys
from onnx import TensorProto, helper
x = helper.make_tensor_value_info("x", TensorProto.DOUBLE, [1, 1, 4, 4])
w = helper.make_tensor("w", TensorProto.DOUBLE, [1, 1, 1, 1], [2.0])
nodes = [
    helper.make_node("Frobnicate", ["x"], ["a"], name="first", domain="com.example"),
    helper.make_node("Frobnicate", ["a"], ["b"], name="second", domain="com.example"),
    helper.make_node("Conv", ["b", "w"], ["y"], name="conv"),
]
y = helper.make_tensor_value_info("y", TensorProto.DOUBLE, [1, 1, 4, 4])
g = helper.make_graph(nodes, "g", [x], [y], [w],
                      value_info=[helper.make_tensor_value_info(n, TensorProto.DOUBLE, [1, 1, 4, 4])
                                  for n in ("a", "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                        helper.make_opsetid("com.example", 1)])
m.ir_version = 8
open(sys.argv[1], "wb").write(m.SerializeToString())
PY
out="$("$inferctl" check "$tmp/bad.onnx")"
rc=$?
[[ $rc -eq 1 ]] || fail "check of an unsupported model exited $rc: $out"
grep -q "can run: no: 3 nodes cannot run (2 reasons)" <<<"$out" || fail "no summary: $out"
grep -q "com.example::Frobnicate (opset 1) is not supported.*\[nodes 'first', 'second'\]" \
  <<<"$out" || fail "Frobnicate line: $out"
grep -q "Conv (opset 17) does not support element type float64.*\[node 'conv'\]" <<<"$out" ||
  fail "Conv line: $out"
"$inferctl" check "$tmp/missing.onnx" >/dev/null 2>&1 && fail "a missing file was accepted"

# A float16 model: Conv has no float16 kernel, so it takes the widening path; the report names
# the path, the casts and the bytes of the converted weight (3x2x1x1 float32 = 24 bytes).
/usr/bin/python3 - "$tmp/half.onnx" <<'PY' || fail "could not write the float16 model"
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper
x = helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, 2, 4, 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 3, 4, 4])
w = numpy_helper.from_array(np.ones((3, 2, 1, 1), np.float16), "w")
g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="conv")], "g", [x], [y],
                      [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
open(sys.argv[1], "wb").write(m.SerializeToString())
PY
out="$("$inferctl" check "$tmp/half.onnx")" || fail "check of a float16 model exited $?: $out"
grep -q "can run: yes" <<<"$out" || fail "float16 model: no 'can run: yes': $out"
grep -q "half precision: widening path (float32 compute): widened 1 nodes to float32 (1 casts in, 1 out; 1 weights converted, 24 bytes)" \
  <<<"$out" || fail "float16 model: no half precision line: $out"
echo "PASS: inferctl check"
