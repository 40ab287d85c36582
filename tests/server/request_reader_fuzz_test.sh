#!/bin/bash
# Builds the request reader's libFuzzer target with clang (-fsanitize=fuzzer,address: the reader
# and the harness instrumented, the engine, kernels and protos linked from Bazel's gcc-built
# archives via the cc_bundle), seeds a corpus with valid ModelInfer requests, and fuzzes for a
# bounded time. Any crash, sanitizer report or failed invariant fails the test.
#
# args: BUNDLE_ARGS BUNDLE_COPTS MODEL_ONNX SOURCES...
# env:  FUZZ_SECONDS (default 20)
set -euo pipefail

bundle_args="$1"
bundle_copts="$2"
model_dir="$(cd "$(dirname "$3")" && pwd)"
shift 3
sources=("$@")

root="$PWD"  # the runfiles root of this workspace: sources, generated headers, archives
out="${TEST_TMPDIR:-$(mktemp -d)}/fuzz"
mkdir -p "$out/corpus" "$out/artifacts"

CXX=/usr/bin/clang++
if [ ! -x "$CXX" ]; then
  echo "request_reader_fuzz_test: $CXX is missing (deploy/bootstrap.sh installs clang)" >&2
  exit 1
fi

mapfile -t copts < "$bundle_copts"
mapfile -t link < "$bundle_args"
echo "compiling ${sources[*]} with clang"
"$CXX" -std=c++17 -O1 -g -fno-omit-frame-pointer -march=x86-64-v3 \
  -fsanitize=fuzzer,address -I"$root" "${copts[@]}" \
  "${sources[@]}" "${link[@]}" -lpthread -o "$out/request_reader_fuzz"

INFERD_FUZZ_WRITE_SEEDS="$out/corpus" "$out/request_reader_fuzz"
echo "seeds: $(ls "$out/corpus" | wc -l)"

export INFERD_FUZZ_MODEL_DIR="$model_dir"
# detect_odr_violation=0: headers compiled by both gcc (archives) and clang (harness).
export ASAN_OPTIONS="detect_leaks=1:detect_odr_violation=0:abort_on_error=1"
set +e
"$out/request_reader_fuzz" "$out/corpus" \
  -max_total_time="${FUZZ_SECONDS:-20}" -max_len=8192 -rss_limit_mb=4096 -timeout=10 \
  -print_final_stats=1 -artifact_prefix="$out/artifacts/" 2>&1 | grep -v '# Uses:' | tail -n 30
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ] || [ -n "$(ls -A "$out/artifacts")" ]; then
  echo "request_reader_fuzz: FAILED (status $status); artifacts:" >&2
  ls -l "$out/artifacts" >&2
  for f in "$out/artifacts"/*; do [ -f "$f" ] && xxd "$f" | head -n 40 >&2; done
  # Kept in bazel-testlogs/tests/server/request_reader_fuzz_test/test.outputs/ for replay:
  #   request_reader_fuzz <crash file>
  [ -n "${TEST_UNDECLARED_OUTPUTS_DIR:-}" ] && cp "$out/artifacts"/* "$TEST_UNDECLARED_OUTPUTS_DIR/"
  exit 1
fi
echo "request_reader_fuzz: ok"
