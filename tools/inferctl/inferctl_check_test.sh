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
echo "PASS: inferctl check"
