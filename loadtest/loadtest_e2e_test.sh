#!/bin/bash
# End-to-end: echo_server (both variants) on a free loopback port, loadtest against it with
# verification (closed and open loop, alternating shapes, a .npy reference that must fail), and
# the --json report checked. Every run is bounded by a request count; the whole test takes a few
# seconds.
set -euo pipefail

LOADTEST="$1"
ECHO="$2"
PY=/usr/bin/python3
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
ECHO_PID=""

cleanup() {
  if [[ -n "$ECHO_PID" ]] && kill -0 "$ECHO_PID" 2>/dev/null; then
    kill -TERM "$ECHO_PID" 2>/dev/null || true
    wait "$ECHO_PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

start_echo() {  # mode
  rm -f "$TMP/port"
  "$ECHO" --mode "$1" --address 127.0.0.1:0 --port-file "$TMP/port" --max-lifetime 120s \
    2>"$TMP/echo_$1.log" &
  ECHO_PID=$!
  for _ in $(seq 1 200); do
    [[ -s "$TMP/port" ]] && break
    kill -0 "$ECHO_PID" 2>/dev/null || fail "echo_server exited: $(cat "$TMP/echo_$1.log")"
    sleep 0.05
  done
  [[ -s "$TMP/port" ]] || fail "echo_server did not write its port"
  PORT=$(cat "$TMP/port")
}

# check_json FILE PYTHON_EXPRESSION...: each expression over `r` (the report) must be true.
check_json() {
  local file="$1"
  shift
  "$PY" - "$file" "$@" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
for expr in sys.argv[2:]:
    if not eval(expr, {"r": r}):
        print("check failed: %s\nreport: %s" % (expr, json.dumps(r, indent=1)[:3000]))
        sys.exit(1)
PYEOF
}

for mode in zerocopy copy; do
  start_echo "$mode"
  T="127.0.0.1:$PORT"

  # Closed loop, 4 streams, 2 connections, echo verification, alternating shapes (16 B, 256 KiB).
  "$LOADTEST" --target "$T" --model echo --shape x:4 --shape x:65536 --verify echo \
    --concurrency 4 --connections 2 --warmup 10 --requests 200 --duration 30s \
    --json "$TMP/closed_$mode.json" || fail "closed loop ($mode)"
  check_json "$TMP/closed_$mode.json" \
    'r["passed"] is True' \
    'r["measured"]["ok"] == 200 and r["measured"]["failed"] == 0' \
    'r["warmup"]["ok"] == 10' \
    'r["measured"]["errors"] == {}' \
    'len(r["requests"]) == 2 and r["requests"][1]["payload_bytes"] == 262144' \
    '0 < r["measured"]["latency_us"]["p50"] <= r["measured"]["latency_us"]["p99"] <= r["measured"]["latency_us"]["max"]' \
    'r["measured"]["throughput_rps"] > 0' \
    'r["measured"]["response_bytes"] > 100 * 262144'

  # Open loop at 400 req/s for 100 requests (about 0.25 s), first-response verification.
  "$LOADTEST" --target "$T" --model echo --shape x:1000 --input x=const:2.5 --rate 400 \
    --requests 100 --duration 20s --json "$TMP/open_$mode.json" --quiet || fail "open loop ($mode)"
  check_json "$TMP/open_$mode.json" \
    'r["loop"] == "open" and r["passed"] is True' \
    'r["measured"]["ok"] == 100' \
    'r["measured"]["wall_s"] >= 0.2'

  cleanup
  ECHO_PID=""
done

# A wrong reference must be reported as VERIFY_FAILED and fail the run.
start_echo zerocopy
"$PY" -c "import numpy as np; np.save('$TMP/wrong.npy', np.ones([8], np.float32))"
if "$LOADTEST" --target "127.0.0.1:$PORT" --model echo --shape x:8 --input x=zeros \
    --verify ref --reference "x=$TMP/wrong.npy" --requests 5 --quiet --json "$TMP/wrong.json"; then
  fail "a wrong reference passed"
fi
check_json "$TMP/wrong.json" \
  'r["passed"] is False' \
  'r["measured"]["errors"].get("VERIFY_FAILED", 0) == 5' \
  '"byte 2 of 32 differs" in r["measured"]["error_samples"][0]'

# The same reference, right this time, read as the input too (npy in, npy reference).
"$PY" -c "import numpy as np; np.save('$TMP/x.npy', np.arange(12, dtype=np.float32).reshape(3, 4))"
"$LOADTEST" --target "127.0.0.1:$PORT" --model echo --no-metadata --input "x=npy:$TMP/x.npy" \
  --verify ref --reference "x=$TMP/x.npy" --requests 5 --quiet --json "$TMP/npy.json" \
  || fail "npy input and reference"
check_json "$TMP/npy.json" 'r["measured"]["ok"] == 5' 'r["requests"][0]["label"] == "x[3,4]"'

# Non-loopback targets are refused before anything is sent.
set +e
"$LOADTEST" --target 10.1.2.3:8001 --model m --requests 1 >/dev/null 2>"$TMP/refused.log"
rc=$?
set -e
[[ $rc -eq 2 ]] || fail "non-loopback target: exit $rc"
grep -q "not a loopback address" "$TMP/refused.log" || fail "no loopback message"

echo "PASS"
