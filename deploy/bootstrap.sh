#!/usr/bin/env bash
# One-time preparation of a Debian 12 machine for building, testing and running inferd.
# Idempotent: installs only the Debian packages that are missing (apt-get update only then),
# and finishes in a few seconds when everything is present. Never downloads anything else.
set -euo pipefail

PACKAGES=(
  # build
  bazel-bootstrap bazel-rules-java g++ clang libclang-rt-14-dev clang-format
  # libraries
  libgrpc++-dev libgrpc-dev protobuf-compiler protobuf-compiler-grpc libprotobuf-dev libabsl-dev
  libonnx-dev libdnnl-dev libspdlog-dev libfmt-dev libyaml-cpp-dev prometheus-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev
  libmicrohttpd-dev rapidjson-dev
  # kernels/cpu: RE2 regular expressions (RegexFullMatch)
  libre2-dev
  # genai/: Unicode data for the tokenizers, SentencePiece .model files
  libicu-dev libsentencepiece-dev
  # test data, tools and peers used by the tests
  libonnx-testdata python3 python3-onnx python3-numpy python3-grpcio python3-protobuf
  python3-grpc-tools prometheus curl procps
  # the virtualenv of PyPI test tools (below), and perf_analyzer's libb64
  python3-venv python3-pip libb64-0d
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Bazel 4 from Debian is installed as bazel-bootstrap's `bazel`; make sure it is on PATH.
if ! command -v bazel >/dev/null 2>&1; then
  echo "bootstrap: bazel not found on PATH after installing bazel-bootstrap" >&2
  exit 1
fi
# PyPI tools for the tests (Triton's client library and perf_analyzer), pinned in
# deploy/requirements-test.txt, in a virtualenv (Debian's Python is externally managed).
# Re-made only when the requirements change.
VENV=/opt/inferd/venv
REQS="$(dirname "$0")/requirements-test.txt"
want="$(sha256sum "$REQS" | cut -d' ' -f1)"
if [ "$(cat "$VENV/.requirements-sha256" 2>/dev/null)" != "$want" ]; then
  echo "bootstrap: making $VENV from $REQS"
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQS"
  echo "$want" >"$VENV/.requirements-sha256"
fi

# CUDA is optional: the default build is CPU-only; with a toolkit, `--config=cuda` also builds
# kernels/cuda and the CUDA allocators (docs/cuda.md). Say which this machine has.
cuda="${CUDA_PATH:-/usr/local/cuda}"
if [ -x "$cuda/bin/nvcc" ]; then
  cuda_version=$("$cuda/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
  cuda_libs=()
  for lib in cublas cudnn; do
    compgen -G "$cuda/lib64/lib$lib.so*" >/dev/null && cuda_libs+=("$lib")
  done
  echo "bootstrap: CUDA toolkit $cuda_version at $cuda (${cuda_libs[*]:-no cuBLAS, no cuDNN}):" \
    "--config=cuda builds the CUDA targets"
else
  echo "bootstrap: no CUDA toolkit at $cuda (no bin/nvcc): CPU-only build"
fi

echo "bootstrap: ok"
