#!/bin/bash
# Runs tests/server/tritonclient_http_test.py with the pinned virtualenv's python (tritonclient
# 2.51.0, made by deploy/bootstrap.sh).
# args: tritonclient_http_test.py, inferd, the mlp model.onnx
set -euo pipefail
exec /opt/inferd/venv/bin/python "$1" "$2" "$(dirname "$3")"
