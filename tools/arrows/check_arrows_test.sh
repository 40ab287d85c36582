#!/bin/bash
# check_arrows.py on a small repository: an include along the arrows passes, one against them
# (engine/ including a partition/ internal, partition/ including the loader, loadtest/ including
# the server) fails naming the file and line.
set -u
check="$1"
repo="$(mktemp -d)"
trap 'rm -rf "$repo"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
mkdir -p "$repo"/{engine,partition,loadtest,tests/server}
write() { printf '#include "%s"\n' "$2" >"$repo/$1"; }
write engine/session.cc partition/plan_report.h
write partition/partitioner.cc engine/graph.h
write partition/partitioner_test.cc partition/testing/test_util.h
write tests/server/e2e_test.cc server/server.h
git -C "$repo" init -q && git -C "$repo" add -A
out="$(/usr/bin/python3 "$check" "$repo")" || fail "includes along the arrows refused: $out"
grep -q "0 includes against the arrows" <<<"$out" || fail "unexpected output: $out"
write engine/run_context.cc partition/resource_accountant.h
write partition/layering_index.cc engine/model.h
write loadtest/wire.cc server/request_reader.h
git -C "$repo" add -A
out="$(/usr/bin/python3 "$check" "$repo")" && fail "includes against the arrows accepted: $out"
for want in "engine/run_context.cc:1: includes partition/resource_accountant.h" \
  "partition/layering_index.cc:1: includes engine/model.h" \
  "loadtest/wire.cc:1: includes server/request_reader.h" "3 includes against the arrows"; do
  grep -qF "$want" <<<"$out" || fail "missing '$want' in: $out"
done
echo "PASS: check_arrows accepts the arrows and names 3 includes against them"
