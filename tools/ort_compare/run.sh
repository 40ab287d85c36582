#!/usr/bin/env bash
# inferd vs ONNX Runtime on this machine: same models, same inputs, same thread count. Prints a
# table of median latencies and the ratio inferd / ORT. See README.md.
#
#   tools/ort_compare/run.sh [--models "cnn transformer"] [--threads "1 2"] [--runs N]
#                            [--warmup N] [--rounds N] [--busy N]
#
# Environment: INFERD_ORT_DIR (where onnxruntime-node is installed; default
# ~/.cache/inferd-ort, never inside the repository), ORT_VERSION (npm version to install when
# missing; default: the latest).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ORT_DIR="${INFERD_ORT_DIR:-${HOME}/.cache/inferd-ort}"
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

ORT_DIR="$(mkdir -p "${ORT_DIR}" && cd "${ORT_DIR}" && pwd)"
case "${ORT_DIR}/" in
  "${REPO}/"*) echo "run.sh: INFERD_ORT_DIR (${ORT_DIR}) must be outside the repository" >&2
               exit 2 ;;
esac

# 1. ONNX Runtime for Node.js, with its CPU library inside the package (no GPU extras).
if [[ ! -f "${ORT_DIR}/node_modules/onnxruntime-node/package.json" ]]; then
  echo "run.sh: installing onnxruntime-node${ORT_VERSION:+@${ORT_VERSION}} into ${ORT_DIR}" \
       "(npm, ONNXRUNTIME_NODE_INSTALL=skip: CPU library only)" >&2
  [[ -f "${ORT_DIR}/package.json" ]] || echo '{"private": true}' > "${ORT_DIR}/package.json"
  (cd "${ORT_DIR}" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund \
     --loglevel=error "onnxruntime-node${ORT_VERSION:+@${ORT_VERSION}}")
fi
ORT_INSTALLED="$(node -p "require('${ORT_DIR}/node_modules/onnxruntime-node/package.json').version")"

# 2. inferctl and the generated models.
targets=(//tools/inferctl:inferctl)
for m in ${MODELS}; do targets+=("//tools/models:${m}"); done
echo "run.sh: bazel build ${targets[*]}" >&2
(cd "${REPO}" && bazel build "${targets[@]}" >&2)

# 3. The comparison, on copies: a later bazel build cannot swap them out mid-run.
echo "run.sh: onnxruntime-node ${ORT_INSTALLED} from ${ORT_DIR}; $(nproc) CPUs;" \
     "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" >&2
mkdir -p "${WORK}/models"
cp -f "${REPO}/bazel-bin/tools/inferctl/inferctl" "${WORK}/inferctl"
for m in ${MODELS}; do
  rm -rf "${WORK}/models/${m}" && cp -r "${REPO}/bazel-bin/tools/models/${m}" "${WORK}/models/"
done
exec /usr/bin/python3 "${REPO}/tools/ort_compare/compare.py" \
  --inferctl "${WORK}/inferctl" \
  --models-dir "${WORK}/models" \
  --ort-modules "${ORT_DIR}/node_modules" --work "${WORK}" \
  --models "${MODELS}" --threads "${THREADS}" --runs "${RUNS}" --warmup "${WARMUP}" \
  --rounds "${ROUNDS}" --busy "${BUSY}"
