#!/bin/bash
# inferd load scenarios: builds what they need, then runs loadtest/scenarios.py, which starts
# inferd and echo_server on free loopback ports, loads them and writes a Markdown report.
#
#   loadtest/scenarios.sh transport|memory|engine|soak|unload|batching|all [--quick] [--out DIR]
#                         [--soak-duration SECONDS] [--unload-cycles N]
#
# `all` takes about 9 minutes on 2 cores (soak 3 minutes) plus 2 for `batching`; `--quick` about
# 2. The report is written to DIR/report.md (default /tmp/inferd_loadtest/<date-time>/). Set
# LOADTEST_NO_BUILD=1 to skip the build. See loadtest/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${LOADTEST_NO_BUILD:-}" ]]; then
  bazel build //loadtest:loadtest //loadtest:echo_server //server:inferd //tools/inferctl \
    //tools/models:identity //tools/models:mlp_dynamic //tools/models:wide_bottleneck \
    //tools/models:wide_output //tools/models:cnn_dynamic
fi
exec /usr/bin/python3 loadtest/scenarios.py "$@"
