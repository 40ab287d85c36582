#!/bin/bash
# Builds inferd, prepares the example model repository and serves it on 127.0.0.1:8001
# (deploy/example/inferd.yaml). Ctrl-C (SIGINT) or SIGTERM drains in-flight requests and exits.
#
#   ./deploy/run-example.sh [--log-level debug]
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //server:inferd
bazel run //deploy/example:prepare
exec bazel-bin/server/inferd --config "$PWD/deploy/example/inferd.yaml" "$@"
