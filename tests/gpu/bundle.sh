#!/usr/bin/env bash
# Builds the GPU checks (tests/gpu/checks.txt) with --config=cuda and packs them, with every
# shared library they load that the GPU machine lacks, into .gpu/inferd-gpu.tar.xz (git-ignored)
# for tests/gpu/run.sh. Left out: glibc's libraries and the driver (the machine has its own, and
# newer), and cuBLAS / cuDNN (hundreds of MiB; run.sh takes the machine's copies from PyTorch's
# nvidia-* wheels).
#
# Usage: tests/gpu/bundle.sh        (from anywhere in the repository; prints the archive's size)
set -euo pipefail
cd "$(dirname "$0")/../.."
checks=tests/gpu/checks.txt
mapfile -t targets < <(grep -v '^#' "$checks" | awk 'NF {print $1}')

bazel build --config=cuda "${targets[@]}"

stage=$(mktemp -d /tmp/inferd-gpu.XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
# Libraries the GPU machine provides itself.
skip='^(linux-vdso|libc\.so|libm\.so|libdl\.so|librt\.so|libpthread\.so|ld-linux|libresolv\.so|libcuda\.so|libnvidia|libcublas|libcublasLt|libcudnn)'
for target in "${targets[@]}"; do
  pkg=${target#//}
  pkg=${pkg%%:*}
  name=${target##*:}
  binary="bazel-bin/$pkg/$name"
  cp -L "$binary" "$stage/bin/$name"
  [ "$(head -c 4 "$binary" | od -An -c | tr -d ' ')" = '177ELF' ] || continue  # a script
  # Every library the dynamic loader resolves here (Bazel's _solib_k8 objects and Debian's).
  ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r soname path; do
    if [[ ! "$soname" =~ $skip ]] && [ ! -e "$stage/lib/$soname" ]; then
      cp -L "$path" "$stage/lib/$soname"
    fi
  done
  missing=$(ldd "$binary" | awk '/not found/ {print $1}')
  if [ -n "$missing" ]; then
    echo "bundle.sh: $binary needs libraries not found here: $missing" >&2
    exit 1
  fi
done
# The checks' data files (the generated models), as each test's runfiles tree has them; run.sh
# points TEST_SRCDIR at data/.
for target in "${targets[@]}"; do
  pkg=${target#//}
  pkg=${pkg%%:*}
  name=${target##*:}
  runfiles="bazel-bin/$pkg/$name.runfiles/inferd/tools/models"
  if [ -d "$runfiles" ]; then
    mkdir -p "$stage/data/inferd/tools/models"
    cp -rLn "$runfiles"/. "$stage/data/inferd/tools/models/"
  fi
done
cp "$checks" tests/gpu/run.sh "$stage/"
{
  echo "commit $(git rev-parse HEAD)$(git diff --quiet HEAD || echo ' (with uncommitted changes)')"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
  echo "nvcc $(/usr/local/cuda/bin/nvcc --version | awk '/release/ {print $5 $6}')"
} >"$stage/MANIFEST"
strip --strip-unneeded "$stage"/bin/* "$stage"/lib/* 2>/dev/null || true

mkdir -p .gpu  # ignored by .gitignore
tar -C "$stage" -cJf .gpu/inferd-gpu.tar.xz .
echo "bundle.sh: .gpu/inferd-gpu.tar.xz: $(du -h .gpu/inferd-gpu.tar.xz | cut -f1)," \
  "${#targets[@]} checks, $(ls "$stage/lib" | wc -l) libraries"
