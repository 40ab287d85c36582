#!/bin/bash
# Runs tests/server/python_client.py with Debian's python3 (grpcio, protobuf, onnx, numpy).
# args: python_client.py, inferd, one of the generated stubs, the mlp model.onnx
set -euo pipefail
exec /usr/bin/python3 "$1" "$2" "$(dirname "$3")" "$(dirname "$4")"
