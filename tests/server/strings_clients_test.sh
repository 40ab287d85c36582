#!/bin/bash
# Runs tests/server/strings_clients_test.py with the pinned virtualenv's python (tritonclient,
# onnx; made by deploy/bootstrap.sh).
# args: the .py, inferd
set -euo pipefail
exec /opt/inferd/venv/bin/python "$@"
