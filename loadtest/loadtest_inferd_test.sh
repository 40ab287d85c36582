#!/bin/bash
# End-to-end against the real daemon: inferd serving the Identity model on free loopback ports,
# loadtest with --verify echo and the admin API: the steady part after a warm-up frees nothing
# and allocates nothing new (but the one IO buffer per stream docs/arenas.md allows), and a Trim
# afterwards empties the arenas. Also the `loadtest admin` commands. Bounded by request counts:
# a few seconds.
set -euo pipefail

LOADTEST="$1"
INFERD="$2"
MODEL_DIR="$(dirname "$3")"
PY=/usr/bin/python3
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
INFERD_PID=""

cleanup() {
  if [[ -n "$INFERD_PID" ]] && kill -0 "$INFERD_PID" 2>/dev/null; then
    kill -TERM "$INFERD_PID" 2>/dev/null || true
    wait "$INFERD_PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  [[ -f "$TMP/inferd.log" ]] && tail -20 "$TMP/inferd.log" >&2
  exit 1
}

mkdir -p "$TMP/models"
ln -sfn "$PWD/$MODEL_DIR" "$TMP/models/identity"
cat >"$TMP/inferd.yaml" <<YAML
server:
  http_address: 127.0.0.1:0
  grpc_address: 127.0.0.1:0
  admin_address: 127.0.0.1:0
  metrics_address: 127.0.0.1:0
  model_repository: models
models:
  - name: identity
YAML
"$INFERD" --config "$TMP/inferd.yaml" --port-file "$TMP/port" >"$TMP/inferd.log" 2>&1 &
INFERD_PID=$!
for _ in $(seq 1 600); do
  [[ -s "$TMP/port" ]] && break
  kill -0 "$INFERD_PID" 2>/dev/null || fail "inferd exited"
  sleep 0.05
done
[[ -s "$TMP/port" ]] || fail "inferd did not write its port"
TARGET="127.0.0.1:$(cat "$TMP/port")"
ADMIN_PORT=$(grep -oE 'admin API listening on [^ ]+ \(port [0-9]+\)' "$TMP/inferd.log" \
  | grep -oE '[0-9]+\)$' | tr -d ')')
[[ -n "$ADMIN_PORT" ]] || fail "no admin port in the log"
ADMIN="127.0.0.1:$ADMIN_PORT"

"$LOADTEST" --target "$TARGET" --model identity --shape x:65536 --verify echo --concurrency 2 \
  --warmup 50 --requests 200 --duration 60s --admin "$ADMIN" --server-pid "$INFERD_PID" \
  --reset-peak --trim-after --json "$TMP/identity.json" || fail "loadtest against inferd"

"$PY" - "$TMP/identity.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["server"]
checks = {
    "passed": r["passed"] is True,
    "200 verified": r["measured"]["ok"] == 200 and r["measured"]["failed"] == 0,
    # The execution arena makes none; the IO arena may need one more buffer when a response
    # of the previous call is still being sent as the next call's output is allocated (the
    # seed allows it), at most once per stream.
    "no system allocation in the execution arena": all(
        a["system_allocations"] == 0 for a in s["arenas_steady"] if a["arena"] == "execution"),
    "at most one more IO buffer per stream": all(
        a["system_allocations"] <= 2 for a in s["arenas_steady"] if a["arena"] == "io"),
    "no system free in the steady part": s["system_frees_steady"] == 0,
    "peak live >= one output": s["arenas_after"]["peak_live_bytes"] >= 65536 * 4,
    "trim released what was retained":
        s["trim_released_bytes"] == s["arenas_after"]["retained_bytes"] > 0,
    "nothing retained after trim": s["arenas_after_trim"]["retained_bytes"] == 0,
    "process figures": s["proc_after"]["minor_faults"] >= s["proc_before"]["minor_faults"],
}
bad = [k for k, ok in checks.items() if not ok]
if bad:
    print("failed checks: %s\n%s" % (bad, json.dumps(s, indent=1)[:4000]))
    sys.exit(1)
PYEOF

# The admin commands: a cap, stats showing it, a trim.
"$LOADTEST" admin cap=1MiB --admin "$ADMIN" --model identity >"$TMP/cap.json" || fail "admin cap"
"$LOADTEST" admin stats --admin "$ADMIN" --model identity >"$TMP/stats.json" || fail "admin stats"
"$PY" - "$TMP/stats.json" <<'PYEOF' || fail "admin stats content"
import json, sys
r = json.load(open(sys.argv[1]))
arenas = r["arenas"]
assert len(arenas) == 2, arenas
assert all(a["model"] == "identity" and int(a["retention_cap_bytes"]) == 1048576 for a in arenas), arenas
PYEOF
"$LOADTEST" admin trim --admin "$ADMIN" >/dev/null || fail "admin trim"
if "$LOADTEST" admin stats --admin "$ADMIN" --model no_such_model >/dev/null 2>&1; then
  fail "stats of an unknown model succeeded"
fi
echo "PASS"
