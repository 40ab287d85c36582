#!/bin/bash
# Runs tests/genai/stream_infer_test.py with the pinned virtualenv's python (tritonclient).
# args: the .py, inferd, the model folder (genai/testdata/models/llama)
set -euo pipefail
exec /opt/inferd/venv/bin/python "$@"
