#!/usr/bin/env bash
# Runs the GPU checks on a machine with an NVIDIA GPU, from the bundle tests/gpu/bundle.sh made
# (.gpu/inferd-gpu.tar.xz, or $BUNDLE). Each check runs with its own timeout (checks.txt); logs and
# gtest XML go under $OUT (default /tmp/inferd-gpu-out); a summary table is printed last.
# cuBLAS and cuDNN come from the machine: PyTorch's nvidia-* wheels (found through python3), or
# $CUDA_LIBS, or /usr/local/cuda/lib64.
#
# Usage: bash tests/gpu/run.sh        exit status 0 when no check failed
set -uo pipefail
cd "$(dirname "$0")/../.."
bundle=${BUNDLE:-.gpu/inferd-gpu.tar.xz}
out=${OUT:-/tmp/inferd-gpu-out}
mkdir -p "$out"
start=$(date +%s)

if [ ! -f "$bundle" ]; then
  echo "run.sh: no bundle at $bundle (make it with tests/gpu/bundle.sh on the build machine)" >&2
  exit 2
fi
work=$(mktemp -d /tmp/inferd-gpu-run.XXXXXX)
trap 'rm -rf "$work"' EXIT
if command -v xz >/dev/null 2>&1; then
  tar -C "$work" -xJf "$bundle"
else  # a machine without xz: Python's tarfile reads it
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
    "$bundle" "$work"
fi

# The machine's cuBLAS / cuDNN: the folders holding them (cuDNN 9 loads its sub-libraries,
# libcudnn_cnn.so.9 and the others, from libcudnn's folder, and NVRTC for its runtime-compiled
# engines, from nvidia-cuda-nvrtc's).
cuda_libs=${CUDA_LIBS:-}
if [ -z "$cuda_libs" ]; then
  nvidia_root=$(python3 -c 'import nvidia, os; print(os.pathsep.join(nvidia.__path__))' \
    2>/dev/null || true)
  for root in ${nvidia_root//:/ } /usr/local/cuda/lib64; do
    [ -d "$root" ] || continue
    dirs=$(find "$root/" \( -name 'libcublas.so.*' -o -name 'libcublasLt.so.*' \
      -o -name 'libcudnn.so.*' -o -name 'libnvrtc.so.*' \) -printf '%h\n' 2>/dev/null \
      | sort -u | paste -sd: -)
    [ -n "$dirs" ] && cuda_libs=${cuda_libs:+$cuda_libs:}$dirs
  done
fi
export LD_LIBRARY_PATH="$work/lib${cuda_libs:+:$cuda_libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The checks that load models find them as in their Bazel runfiles.
export TEST_SRCDIR="$work/data"

{
  echo "== bundle"
  cat "$work/MANIFEST"
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1
  echo "cuBLAS/cuDNN from: ${cuda_libs:-(none found)}"
} | tee "$out/machine.log"

# One row per check: name, result, passed, skipped, failed, seconds, and the worst error against
# the CPU kernels where the check records one.
rows=()
failures=0
benches=()
while read -r target timeout_s kind; do
  [[ -z "$target" || "$target" == \#* ]] && continue
  name=${target##*:}
  log="$out/$name.log"
  xml="$out/$name.xml"
  rm -f "$xml"  # a crash must not leave an earlier run's report to be read
  t0=$(date +%s)
  [ "${kind:-}" = "tool" ] && continue  # a program the scripts use (inferd, inferctl)
  if [ "${kind:-}" = "bench" ]; then  # a program that prints a table: shown before the summary
    timeout --kill-after=10 "$timeout_s" "$work/bin/$name" >"$log" 2>&1
    rc=$?
    benches+=("$log")
  elif [ "${kind:-}" = "script" ]; then  # serve_check.sh: the bundle's folder and $OUT
    timeout --kill-after=10 "$timeout_s" "$work/bin/$name" "$work" "$out" >"$log" 2>&1
    rc=$?
    benches+=("$log")
  else
    timeout --kill-after=10 "$timeout_s" "$work/bin/$name" --gtest_output="xml:$xml" >"$log" 2>&1
    rc=$?
  fi
  seconds=$(( $(date +%s) - t0 ))
  counts=$(python3 - "$xml" <<'PY' 2>/dev/null || echo "0 0 0 - -"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
passed = skipped = failed = 0
worst, compared = None, 0
for case in root.iter("testcase"):
    if case.find("failure") is not None or case.find("error") is not None:
        failed += 1
    elif case.get("result") == "skipped" or case.find("skipped") is not None:
        skipped += 1
    else:
        passed += 1
    for prop in case.iter("property"):
        if prop.get("name") == "worst_abs_error":
            worst = max(worst or 0.0, float(prop.get("value")))
        if prop.get("name") == "comparisons":
            compared += int(prop.get("value"))
    for key in ("worst_abs_error", "comparisons"):
        value = case.get(key)
        if value is None:
            continue
        if key == "worst_abs_error":
            worst = max(worst or 0.0, float(value))
        else:
            compared += int(value)
print(passed, skipped, failed, "-" if worst is None else f"{worst:.3g}", compared or "-")
PY
)
  read -r passed skipped failed worst compared <<<"$counts"
  [ "${kind:-}" = "bench" ] || [ "${kind:-}" = "script" ] && passed=- skipped=- failed=-
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    result="TIMEOUT"
  elif [ "${kind:-}" = "bench" ] || [ "${kind:-}" = "script" ]; then
    [ "$rc" -eq 0 ] && result="ok" || result="FAIL"
  elif [ "$rc" -ne 0 ] || [ "$failed" != 0 ]; then
    result="FAIL"
  elif [ "$passed" = 0 ] && [ "$skipped" != 0 ]; then
    result="SKIPPED"
  else
    result="ok"
  fi
  [ "$result" = "ok" ] || [ "$result" = "SKIPPED" ] || failures=$((failures + 1))
  echo "== $name: $result (rc $rc, ${seconds}s)"
  rows+=("$name $result $passed $skipped $failed $seconds $compared $worst")
done <"$work/checks.txt"

for log in "${benches[@]}"; do
  echo
  echo "== $(basename "$log" .log)"
  cat "$log"
done
# Whole models on cuda:0 (gpu_models_test): nodes placed, copies, CPU and GPU latency per model.
if [ -f "$out/gpu_models_test.log" ]; then
  echo
  echo "== models on cuda:0"
  grep -h "nodes on cuda:0" "$out/gpu_models_test.log" || echo "(none ran)"
fi
echo
echo "== summary ($(( $(date +%s) - start )) s; logs in $out)"
{
  echo "CHECK RESULT PASSED SKIPPED FAILED SECONDS COMPARED WORST_ERR"
  printf '%s\n' "${rows[@]}"
} | awk '{printf "%-28s %-8s %7s %8s %7s %8s %9s %10s\n", $1, $2, $3, $4, $5, $6, $7, $8}' |
  tee "$out/summary.txt"
[ "$failures" -eq 0 ]
