#!/usr/bin/env bash
# Compiles a libFuzzer target with clang (Bazel's toolchain is gcc): SOURCES instrumented, the
# rest linked from a cc_bundle's gcc-built archives (tests/server/cc_bundle.bzl), in a genrule
# so that the binary is cached like any build output.
# usage: build_fuzzer.sh OUT BUNDLE_ARGS BUNDLE_COPTS BINDIR SOURCES...
set -euo pipefail
out=$1
bundle_args=$2
bundle_copts=$3
bindir=$4
shift 4
mapfile -t copts < "$bundle_copts"
# The bundle names archives by their path under the output tree; from a genrule they are read
# there (bazel-out/<config>/bin/...).
link=()
while IFS= read -r arg; do
  case "$arg" in
    -*) link+=("$arg") ;;
    *) link+=("$bindir/$arg") ;;
  esac
done < "$bundle_args"
/usr/bin/clang++ -std=c++17 -O1 -g -fno-omit-frame-pointer -march=x86-64-v3 \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -w \
  -I. -I"$bindir" "${copts[@]}" "$@" "${link[@]}" -lpthread -o "$out"
