#!/bin/bash
# `inferctl ops` prints the kernel registry: a header, Conv on cpu for opset 1 onwards, and as
# --json an array whose entries name the device; an argument is refused.
set -u
inferctl="$1"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
table="$("$inferctl" ops)" || fail "inferctl ops exited $?"
head -1 <<<"$table" | grep -q "DOMAIN.*OP.*OPSETS.*DEVICE.*TYPES" || fail "no header: $(head -3 <<<"$table")"
grep -qE "^ai\.onnx +Conv +1-[0-9]+ +cpu +float32" <<<"$table" || fail "no Conv on cpu: $table"
rows=$(($(wc -l <<<"$table") - 1))
[[ $rows -gt 100 ]] || fail "only $rows kernel rows"
json="$("$inferctl" ops --json)" || fail "inferctl ops --json exited $?"
/usr/bin/python3 -c '
import json, sys
defs = json.loads(sys.stdin.read())
ops = {(d["op"], d["device"]) for d in defs}
assert ("Conv", "cpu") in ops and ("MatMul", "cpu") in ops, sorted(ops)[:10]
print(len(defs), "definitions")
' <<<"$json" || fail "bad JSON"
"$inferctl" ops extra >/dev/null 2>&1 && fail "an argument was accepted"
echo "PASS: inferctl ops lists $rows kernel definitions"
