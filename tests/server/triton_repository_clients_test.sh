#!/bin/bash
# Runs tests/server/triton_repository_clients_test.py with the pinned virtualenv's python
# (tritonclient 2.51.0, made by deploy/bootstrap.sh).
# args: the .py, inferd, mlp_dynamic's model.onnx, cnn_dynamic's model.onnx
set -euo pipefail
exec /opt/inferd/venv/bin/python "$@"
