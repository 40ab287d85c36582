#!/bin/bash
# Triton's perf_analyzer (gRPC and HTTP) and inferd's loadtest on the same inferd: builds what
# loadtest/triton_perf.py needs, then runs it with the given arguments (see its docstring).
#   loadtest/triton_perf.sh [--models mlp,cnn] [--concurrency 1,4] [--seconds 3] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${LOADTEST_NO_BUILD:-}" ]]; then
  bazel build //server:inferd //loadtest:loadtest //tools/models:mlp //tools/models:cnn
fi
exec /usr/bin/python3 loadtest/triton_perf.py "$@"
