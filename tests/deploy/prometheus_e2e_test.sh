#!/bin/bash
# A real Prometheus scraping a real inferd, on loopback: proof that what the dashboards and
# alerts read is what a scraper gets.
#
#   1. inferd (//server:inferd) serves a copy of the generated mlp model, every address on
#      127.0.0.1 port 0: the gRPC port comes from --port-file, the metrics port from its log;
#   2. the gRPC health probe (//deploy/probe:health_probe, the image's HEALTHCHECK) sees the
#      server and the model SERVING, an unknown model not;
#   3. inferctl sends inferences; Debian's /usr/bin/prometheus starts on a free loopback port
#      (storage in the test's tmpdir, scrape and rule interval 1 s, deploy/prometheus/alerts.yml
#      loaded) and scrapes inferd's /metrics;
#   4. after two scrapes, curl queries /api/v1/query: inferd_arena_live_bytes (one series per
#      arena, labels model / device / arena / job / instance), inferd_requests_total (the count
#      sent), then, after more traffic, latency quantiles from the _bucket series and the SLO
#      recording rule;
#   5. every dashboard query and rule expression evaluates against that Prometheus
#      (dashboard_metrics.py live).
# Bounded: every wait has a deadline (about 60 s in all); every process started here is killed
# on exit. The query results are kept in $TEST_UNDECLARED_OUTPUTS_DIR.
#
# args: inferd inferctl health_probe model.onnx(of mlp) alerts.yml dashboard.json
#       dashboard_metrics.py
set -euo pipefail

inferd="$1" inferctl="$2" probe="$3" model_onnx="$4" alerts="$5" dashboard="$6" checker="$7"
PROMETHEUS="${PROMETHEUS:-/usr/bin/prometheus}"
PYTHON3=/usr/bin/python3
if [ ! -x "$PROMETHEUS" ]; then
  echo "FAIL: $PROMETHEUS not found: install Debian's prometheus package (deploy/bootstrap.sh does)" >&2
  exit 1
fi

work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/prometheus_e2e.XXXXXX")"
out="${TEST_UNDECLARED_OUTPUTS_DIR:-$work/out}"
mkdir -p "$out"
pids=()
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$status" -ne 0 ]; then
    echo "---- inferd log (tail)"; tail -n 30 "$work/inferd.log" 2>/dev/null || true
    echo "---- prometheus log (tail)"; tail -n 30 "$work/prometheus.log" 2>/dev/null || true
  fi
  rm -rf "$work/prometheus-data"
}
trap cleanup EXIT

deadline=$((SECONDS + 60))
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
time_left() { [ "$SECONDS" -lt "$deadline" ]; }
curl_q() { curl --silent --show-error --fail --noproxy '*' --max-time 5 "$@"; }

# JSON assertions on stdin: a Python expression over `r` (the parsed response) that must be true.
json_check() {
  "$PYTHON3" -c '
import json, sys
r = json.load(sys.stdin)
ok = eval("(" + sys.argv[1] + ")")
sys.exit(0 if ok else 1)' "$1"
}

# ---- 1. inferd on loopback, ports chosen by the kernel
mkdir -p "$work/models/mlp"
cp -L "$model_onnx" "$work/models/mlp/model.onnx"
cat > "$work/inferd.yaml" <<'YAML'
server:
  http_address: 127.0.0.1:0
  grpc_address: 127.0.0.1:0
  admin_address: 127.0.0.1:0
  metrics_address: 127.0.0.1:0
  model_repository: models
  drain_timeout: 2s
models:
  - name: mlp
    max_concurrent_runs: 2
    retention_caps:
      cpu: {execution: 16MiB}     # io left unbounded: exported as +Inf
YAML
"$inferd" --config "$work/inferd.yaml" --port-file "$work/grpc.port" > "$work/inferd.log" 2>&1 &
pids+=($!)
until [ -s "$work/grpc.port" ]; do
  kill -0 "${pids[0]}" 2>/dev/null || fail "inferd exited at start"
  time_left || fail "inferd not ready in time"
  sleep 0.1
done
grpc_port="$(cat "$work/grpc.port")"
metrics_port="$(sed -n 's/.*Prometheus metrics on .* (port \([0-9]*\)).*/\1/p' "$work/inferd.log" | head -1)"
[ -n "$metrics_port" ] || fail "no metrics port in the inferd log"
echo "inferd: gRPC 127.0.0.1:$grpc_port, metrics 127.0.0.1:$metrics_port"

# ---- 2. the health probe
"$probe" --addr "127.0.0.1:$grpc_port" || fail "health probe: server not SERVING"
"$probe" --addr "127.0.0.1:$grpc_port" --service mlp || fail "health probe: mlp not SERVING"
if "$probe" --addr "127.0.0.1:$grpc_port" --service no-such-model; then
  fail "health probe: an unknown model reported SERVING"
fi
echo "ok: health probe"

# ---- 3. traffic, then Prometheus
infer() {
  for _ in $(seq "$1"); do
    "$inferctl" infer --addr "127.0.0.1:$grpc_port" --model mlp --random > /dev/null ||
      fail "inferctl infer failed"
  done
}
infer 5
# Read the whole page first: `curl | grep -q` under pipefail fails when grep stops reading early.
metrics_page=$(curl_q "http://127.0.0.1:$metrics_port/metrics") || fail "GET /metrics failed"
grep -q '^inferd_arena_live_bytes{' <<< "$metrics_page" ||
  fail "inferd's /metrics has no inferd_arena_live_bytes"

cp "$alerts" "$work/alerts.yml"
free_port() {
  "$PYTHON3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
cat > "$work/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: ["$work/alerts.yml"]
scrape_configs:
  - job_name: inferd
    static_configs:
      - targets: ["127.0.0.1:$metrics_port"]
YAML
# A port picked by binding and releasing may be taken again before Prometheus binds it: retry.
for attempt in 1 2 3; do
  prom_port="$(free_port)"
  "$PROMETHEUS" --config.file="$work/prometheus.yml" \
    --storage.tsdb.path="$work/prometheus-data" \
    --web.listen-address="127.0.0.1:$prom_port" \
    --log.level=warn > "$work/prometheus.log" 2>&1 &
  prom_pid=$!
  pids+=("$prom_pid")
  prom="http://127.0.0.1:$prom_port"
  until curl_q "$prom/-/ready" > /dev/null 2>&1; do
    kill -0 "$prom_pid" 2>/dev/null || break
    time_left || fail "Prometheus not ready in time"
    sleep 0.2
  done
  kill -0 "$prom_pid" 2>/dev/null && break
  grep -q 'address already in use' "$work/prometheus.log" || fail "Prometheus exited at start"
  echo "port $prom_port taken; retrying"
done
echo "prometheus: $prom ($("$PROMETHEUS" --version 2>&1 | head -1))"

# ---- 4. two scrapes, then queries through the HTTP API
query() { curl_q "$prom/api/v1/query" --data-urlencode "query=$1"; }
wait_for() {  # EXPR PYTHON-CHECK DESCRIPTION
  until query "$1" | json_check "$2" 2>/dev/null; do
    time_left || fail "timed out waiting for $3 ($1: $(query "$1" || true))"
    sleep 0.5
  done
  echo "ok: $3"
}
wait_for 'count_over_time(up{job="inferd"}[1m])' \
  'r["data"]["result"] and float(r["data"]["result"][0]["value"][1]) >= 2' "two scrapes of inferd"
wait_for 'up{job="inferd"}' 'float(r["data"]["result"][0]["value"][1]) == 1' "target up"

query 'inferd_arena_live_bytes' > "$out/inferd_arena_live_bytes.json"
json_check '
r["status"] == "success" and
sorted(s["metric"]["arena"] for s in r["data"]["result"]) == ["execution", "io"] and
all(s["metric"]["__name__"] == "inferd_arena_live_bytes" and s["metric"]["model"] == "mlp" and
    s["metric"]["device"] == "cpu:0" and s["metric"]["job"] == "inferd" and
    s["metric"]["instance"] == "127.0.0.1:'"$metrics_port"'" and float(s["value"][1]) >= 0
    for s in r["data"]["result"])' < "$out/inferd_arena_live_bytes.json" ||
  fail "inferd_arena_live_bytes: $(cat "$out/inferd_arena_live_bytes.json")"
echo "ok: inferd_arena_live_bytes: 2 series (execution, io) with model, device, arena, job, instance"

query 'inferd_arena_retention_cap_bytes' > "$out/inferd_arena_retention_cap_bytes.json"
json_check '
{s["metric"]["arena"]: s["value"][1] for s in r["data"]["result"]} ==
{"execution": "16777216", "io": "+Inf"}' < "$out/inferd_arena_retention_cap_bytes.json" ||
  fail "retention caps: $(cat "$out/inferd_arena_retention_cap_bytes.json")"
echo "ok: inferd_arena_retention_cap_bytes: execution 16 MiB, io +Inf"

query 'inferd_requests_total{model="mlp"}' > "$out/inferd_requests_total.json"
json_check '
[(s["metric"]["code"], s["value"][1]) for s in r["data"]["result"]] == [("OK", "5")]' \
  < "$out/inferd_requests_total.json" ||
  fail "inferd_requests_total: $(cat "$out/inferd_requests_total.json")"
echo "ok: inferd_requests_total{model=\"mlp\",code=\"OK\"} 5"

query 'inferd_model_state{model="mlp",state="READY"}' |
  json_check 'r["data"]["result"][0]["value"][1] == "1"' || fail "mlp not READY in inferd_model_state"
echo "ok: inferd_model_state{state=\"READY\"} 1"

# Live bytes are 0 between requests; the peaks show the requests used both arenas.
query 'inferd_arena_peak_live_bytes{model="mlp"}' > "$out/inferd_arena_peak_live_bytes.json"
json_check '
len(r["data"]["result"]) == 2 and all(float(s["value"][1]) > 0 for s in r["data"]["result"])' \
  < "$out/inferd_arena_peak_live_bytes.json" ||
  fail "inferd_arena_peak_live_bytes: $(cat "$out/inferd_arena_peak_live_bytes.json")"
echo "ok: inferd_arena_peak_live_bytes > 0 in both arenas: $("$PYTHON3" -c '
import json, sys
print(", ".join(s["metric"]["arena"] + " " + s["value"][1] + " B" for s in json.load(sys.stdin)["data"]["result"]))' \
  < "$out/inferd_arena_peak_live_bytes.json")"

# More traffic between scrapes, so that rates and quantiles have something to show.
infer 20
wait_for 'inferd_requests_total{model="mlp",code="OK"}' 'r["data"]["result"][0]["value"][1] == "25"' \
  "a scrape after 20 more inferences"
sleep 1.5  # one more scrape: rate() needs two samples after the change (and rules one evaluation)
for phase in queue compute serialize request; do
  expr="histogram_quantile(0.99, sum by (le) (rate(inferd_${phase}_duration_seconds_bucket{model=\"mlp\"}[1m])))"
  query "$expr" > "$out/p99_$phase.json"
  json_check '
r["data"]["result"] and 0 < float(r["data"]["result"][0]["value"][1]) <= 10' < "$out/p99_$phase.json" ||
    fail "p99 of $phase: $(cat "$out/p99_$phase.json")"
  echo "ok: p99 $phase latency $("$PYTHON3" -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])' < "$out/p99_$phase.json") s"
done
wait_for 'inferd:request_slo_violation:ratio_rate5m{model="mlp"}' \
  'r["data"]["result"] and 0 <= float(r["data"]["result"][0]["value"][1]) <= 1' \
  "recording rule inferd:request_slo_violation:ratio_rate5m (alerts.yml) evaluated"
curl_q "$prom/api/v1/rules" > "$out/rules.json"
json_check 'r["status"] == "success" and
all(rule["health"] == "ok" for g in r["data"]["groups"] for rule in g["rules"])' \
  < "$out/rules.json" || fail "a rule of alerts.yml is unhealthy: $(cat "$out/rules.json")"
echo "ok: every rule of alerts.yml healthy in Prometheus"

# ---- 5. the dashboard's queries and the rules' expressions against this Prometheus
"$PYTHON3" "$checker" live "$prom" "$dashboard" "$alerts" mlp

echo "---- inferd_arena_live_bytes through Prometheus's /api/v1/query:"
cat "$out/inferd_arena_live_bytes.json"
echo
echo "PASS"
