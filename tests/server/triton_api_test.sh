#!/bin/bash
# Runs tests/server/triton_api_test.py with the pinned tritonclient of /opt/inferd/venv
# (deploy/bootstrap.sh); the test models are generated with Debian's python3-onnx.
# args: triton_api_test.py, inferd, the mlp model.onnx, gen_triton_test_models.py
set -euo pipefail
exec /opt/inferd/venv/bin/python "$1" "$2" "$(dirname "$3")" "$4"
