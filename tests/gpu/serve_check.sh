#!/usr/bin/env bash
# The GPU machine's end-to-end check: the bundle's inferd serves the generated mlp and cnn on
# cuda:0 (budget-only, 64 MiB: the whole model) and on the CPU, inferctl (the KServe v2 gRPC client
# of this repository) runs each with the same seeded random inputs, and the outputs of the GPU
# copy are compared with the CPU copy's. Also prints the GPU copies' partition reports, their
# cuda:0 arenas (admin API) and the GPU memory gauges (/metrics). Run by run.sh from the
# unpacked bundle (bin/inferd, bin/inferctl, data/).
#
# Usage: serve_check.sh BUNDLE_DIR OUT_DIR      exit status 0 when every output matched
# (DEVICE=cpu:1 runs the same check on a machine without a GPU, to test the script itself.)
set -uo pipefail
work=$1
out=$2
device=${DEVICE:-cuda:0}
dir=$(mktemp -d /tmp/inferd-serve.XXXXXX)
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
models="mlp cnn"
mkdir -p "$dir/models"
for m in $models; do
  cp -r "$work/data/inferd/tools/models/$m" "$dir/models/${m}_gpu"
  cp -r "$work/data/inferd/tools/models/$m" "$dir/models/${m}_cpu"
done
{
  cat <<'YAML'
server:
  grpc_address: 127.0.0.1:0
  http_address: 127.0.0.1:0
  metrics_address: 127.0.0.1:0
  admin_address: 127.0.0.1:0
  model_repository: models
  load_all_models: true
models:
YAML
  for m in $models; do
    echo "  - name: ${m}_gpu"
    echo "    partition: {devices: {$device: 64MiB}}"
  done
} >"$dir/inferd.yaml"
"$work/bin/inferd" --config "$dir/inferd.yaml" >"$out/serve_inferd.log" 2>&1 &
pid=$!
ctl=("$work/bin/inferctl")
# The ports inferd picked (port 0 in the config), from its log.
port_of() { grep -m1 "$1" "$out/serve_inferd.log" | sed -n 's/.*(port \([0-9]*\)).*/\1/p'; }
for _ in $(seq 1 60); do
  grpc=$(port_of "KServe v2 gRPC")
  admin=$(port_of "admin API listening")
  metrics=$(port_of "Prometheus metrics on")
  [ -n "$grpc" ] && [ -n "$admin" ] && [ -n "$metrics" ] && break
  sleep 0.5
done
ready=0
for _ in $(seq 1 120); do
  if "${ctl[@]}" models --addr "127.0.0.1:$grpc" 2>/dev/null | grep -c READY | grep -qx "$((2 * $(echo $models | wc -w)))"; then
    ready=1
    break
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.5
done
if [ "$ready" != 1 ]; then
  echo "serve_check: inferd did not get every model READY; its log:"
  cat "$out/serve_inferd.log"
  exit 1
fi
"${ctl[@]}" models --addr "127.0.0.1:$grpc"
failures=0
for m in $models; do
  for side in gpu cpu; do
    "${ctl[@]}" infer --addr "127.0.0.1:$grpc" --model "${m}_$side" --random \
      --output-dir "$dir/out_${m}_$side" >"$out/serve_${m}_$side.log" 2>&1 ||
      { echo "serve_check: infer ${m}_$side failed:"; cat "$out/serve_${m}_$side.log"; failures=$((failures + 1)); }
  done
  python3 - "$dir/out_${m}_gpu" "$dir/out_${m}_cpu" "$m" <<'PY' || failures=$((failures + 1))
import os, sys
import numpy as np
gpu, cpu, model = sys.argv[1:4]
names = sorted(f for f in os.listdir(cpu) if f.endswith(".npy"))
if not names:
    sys.exit(f"{model}: no outputs")
worst = 0.0
for name in names:
    a, b = np.load(os.path.join(cpu, name)), np.load(os.path.join(gpu, name))
    assert a.shape == b.shape, f"{model} {name}: {a.shape} vs {b.shape}"
    worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b))) if a.size else 0.0)
    ok = np.allclose(b, a, rtol=1e-3, atol=1e-3)
    print(f"{model}: {name} {a.shape} worst |cpu - gpu| {worst:.3g} {'ok' if ok else 'DIFFERS'}")
    if not ok:
        sys.exit(1)
PY
  "${ctl[@]}" report --admin-addr "127.0.0.1:$admin" --model "${m}_gpu" 2>&1 | head -30
done
"${ctl[@]}" stats --admin-addr "127.0.0.1:$admin" --device "$device" 2>&1 | head -20
python3 -c 'import sys, urllib.request; print("\n".join(l for l in urllib.request.urlopen("http://127.0.0.1:" + sys.argv[1] + "/metrics").read().decode().splitlines() if l.startswith("inferd_device_memory_bytes") or (l.startswith("inferd_arena_live_bytes") and "_gpu" in l)))' "$metrics" 2>&1 | head -20
echo "serve_check: $failures failure(s)"
[ "$failures" -eq 0 ]
