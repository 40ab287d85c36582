#!/usr/bin/env bash
# inferd vs ONNX Runtime on this machine: same models, same inputs, same thread count. Prints a
# table of median latencies and the ratio inferd / ORT. See README.md.
#
#   tools/ort_compare/run.sh [--models "cnn transformer"] [--threads "1 2"] [--runs N]
#                            [--warmup N] [--rounds N] [--busy N]
#
# Environment: INFERD_ORT_PYTHON (a Python with numpy, onnx and onnxruntime; default the test
# virtualenv, /opt/inferd/venv/bin/python).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="${TMPDIR:-/tmp}/inferd-ort-compare"
MODELS="cnn cnn_b8 transformer transformer_large"
THREADS="1 2"
RUNS=200
WARMUP=20
ROUNDS=3
BUSY=0

while [[ $# -gt 0 ]]; do
  case "$1" in
    --models) MODELS="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --busy) BUSY="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

# 1. ONNX Runtime from PyPI: the test virtualenv's onnxruntime (deploy/requirements-test.txt).
ORT_PYTHON="${INFERD_ORT_PYTHON:-/opt/inferd/venv/bin/python}"
if ! ORT_INSTALLED="$("${ORT_PYTHON}" -c 'import onnxruntime; print(onnxruntime.__version__)' \
                      2>/dev/null)"; then
  echo "run.sh: ${ORT_PYTHON} cannot import onnxruntime; run deploy/bootstrap.sh (it makes the" \
       "test virtualenv) or set INFERD_ORT_PYTHON to a Python that has it" >&2
  exit 2
fi

# 2. inferctl and the generated models.
targets=(//tools/inferctl:inferctl)
for m in ${MODELS}; do targets+=("//tools/models:${m}"); done
echo "run.sh: bazel build ${targets[*]}" >&2
(cd "${REPO}" && bazel build "${targets[@]}" >&2)

# 3. The comparison, on copies: a later bazel build cannot swap them out mid-run.
echo "run.sh: onnxruntime ${ORT_INSTALLED} (${ORT_PYTHON}); $(nproc) CPUs;" \
     "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" >&2
mkdir -p "${WORK}/models"
cp -f "${REPO}/bazel-bin/tools/inferctl/inferctl" "${WORK}/inferctl"
for m in ${MODELS}; do
  rm -rf "${WORK}/models/${m}" && cp -r "${REPO}/bazel-bin/tools/models/${m}" "${WORK}/models/"
done
export INFERD_ORT_PYTHON="${ORT_PYTHON}"
exec "${ORT_PYTHON}" "${REPO}/tools/ort_compare/compare.py" \
  --inferctl "${WORK}/inferctl" \
  --models-dir "${WORK}/models" \
  --work "${WORK}" \
  --models "${MODELS}" --threads "${THREADS}" --runs "${RUNS}" --warmup "${WARMUP}" \
  --rounds "${ROUNDS}" --busy "${BUSY}"
