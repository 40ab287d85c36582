#!/usr/bin/env bash
# Runs a libFuzzer binary for a bounded time over a seed corpus; fails if it finds a crash.
# usage: run_fuzzer.sh FUZZER SECONDS SEED_FILE...   (seeds: its .onnx, .bin and .yaml files)
set -euo pipefail
fuzzer=$1
seconds=$2
shift 2
work=${TEST_TMPDIR:-$(mktemp -d)}
corpus=$work/corpus
mkdir -p "$corpus" "$work/artifacts"
for seed in "$@"; do
  case "$seed" in *.onnx|*.bin|*.yaml) cp "$seed" "$corpus/$(basename "$(dirname "$seed")")_$(basename "$seed")" ;; esac
done
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=1048576 \
  -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$corpus" 2>&1 | tail -25
