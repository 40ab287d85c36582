#!/usr/bin/env bash
# ort_case_test's script: runs one generator (tests/ort_cases/<family>/gen.py) with the test
# virtualenv's Python into a temporary directory, then the conformance runner over that suite,
# which must pass every case.
#   run_cases.sh RUNNER ORT_CASE_PY GENERATOR SUITE
set -euo pipefail
runner=$1 lib=$2 gen=$3 suite=$4
py=${INFERD_TEST_PYTHON:-/opt/inferd/venv/bin/python}
if ! "$py" -c "import onnx, onnxruntime" 2>/dev/null; then
  echo "$py lacks onnx/onnxruntime: run deploy/bootstrap.sh (deploy/requirements-test.txt)" >&2
  exit 1
fi
out="${TEST_TMPDIR:-$(mktemp -d)}/cases"
PYTHONPATH="$(dirname "$lib")${PYTHONPATH:+:$PYTHONPATH}" "$py" "$gen" --out "$out"
n=$(find "$out/$suite" -mindepth 1 -maxdepth 1 -type d | wc -l)
echo "run_cases: $n '$suite' cases written by $(basename "$(dirname "$gen")")/gen.py"
"$runner" --data "$out" --suites "$suite" --failures --require_pass
