#!/usr/bin/env bash
# qdq_gemm_fusion_test: quantize_static's QDQ form of gen.py's MLP (MatMul + Add, Relu, Gemm with
# transB) must load with its Gemm group fused into com.microsoft QGemm (and its MatMul group into
# QLinearMatMul): `inferctl plan --nodes` lists the nodes the session would run. The outputs
# themselves are checked against ONNX Runtime by quant_ort_test (model_mlp_qdq*).
#   qdq_gemm_fusion_test.sh INFERCTL ORT_CASE_PY QDQ_MLP_PY
set -euo pipefail
inferctl=$1 lib=$2 script=$3
py=${INFERD_TEST_PYTHON:-/opt/inferd/venv/bin/python}
if ! "$py" -c "import onnx, onnxruntime" 2>/dev/null; then
  echo "$py lacks onnx/onnxruntime: run deploy/bootstrap.sh (deploy/requirements-test.txt)" >&2
  exit 1
fi
out="${TEST_TMPDIR:-$(mktemp -d)}/qdq_mlp"
PYTHONPATH="$(dirname "$lib"):$(dirname "$script")${PYTHONPATH:+:$PYTHONPATH}" \
  "$py" "$script" "$out" >/dev/null 2>&1
status=0
for model in mlp_qdq mlp_qdq_perchannel; do
  plan=$("$inferctl" plan "$out/$model.onnx" --devices cpu --nodes)
  # The op column of the node table: QGemm present, no float Gemm or MatMul left.
  ops=$(printf '%s\n' "$plan" | awk '$1 ~ /^[0-9]+$/ {print $(NF-1)}' | sort | uniq -c)
  echo "$model:"
  printf '%s\n' "$ops"
  for want in QGemm QLinearMatMul; do
    if ! printf '%s\n' "$ops" | grep -qw "$want"; then
      echo "FAIL $model: no $want node" >&2
      status=1
    fi
  done
  if ! printf '%s\n' "$plan" | grep -q '/fc2/Gemm/QdqFusion'; then
    echo "FAIL $model: no node named /fc2/Gemm/QdqFusion" >&2
    status=1
  fi
  for unwanted in Gemm MatMul; do
    if printf '%s\n' "$ops" | grep -qw "$unwanted"; then
      echo "FAIL $model: a float $unwanted is left" >&2
      status=1
    fi
  done
done
exit $status
