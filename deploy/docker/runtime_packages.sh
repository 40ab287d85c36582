#!/bin/bash
# The Debian packages that provide the shared libraries of the given binaries (from ldd and
# dpkg), one per line, sorted: what deploy/Dockerfile's runtime stage must install. libc6 is left
# out: it is in every Debian image.
#
#   runtime_packages.sh BINARY...
#   runtime_packages.sh --check DOCKERFILE BINARY...
#
# --check compares them with the packages the Dockerfile's runtime stage installs (the one
# `apt-get install` of the stage named "runtime") and fails, showing both, when they differ.
# The Docker build runs it on the binaries it built; tests/deploy:dockerfile_check runs it here.
set -euo pipefail

dockerfile=""
if [ "${1:-}" = "--check" ]; then
  dockerfile="$2"
  shift 2
fi
if [ $# -eq 0 ]; then
  echo "usage: runtime_packages.sh [--check DOCKERFILE] BINARY..." >&2
  exit 64
fi

# The libraries of the binaries: one resolved path per line, sorted, deduplicated.
libraries() {
  local bin libs
  for bin in "$@"; do
    if ! libs="$(ldd "$bin")"; then
      echo "runtime_packages: ldd $bin failed" >&2
      return 1
    fi
    if grep -q 'not found' <<<"$libs"; then
      echo "runtime_packages: $bin: missing libraries:" >&2
      grep 'not found' <<<"$libs" >&2
      return 1
    fi
    # "libfoo.so.1 => /lib/.../libfoo.so.1 (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)"
    awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' <<<"$libs"
  done | sort -u
}

# The packages owning the libraries. One dpkg-query call for all of them (it reads the whole
# database each time); with usrmerge dpkg may know a file under /lib or /usr/lib, so each library
# is asked under every spelling of its path.
needed() {
  local libs lib real c found owners pkg
  libs="$(libraries "$@")" || return 1
  declare -A candidates_of=()
  local all=()
  while read -r lib; do
    real="$(readlink -f "$lib")"
    candidates_of[$lib]="$lib $real /usr$lib /usr$real ${lib#/usr} ${real#/usr}"
    all+=($lib $real "/usr$lib" "/usr$real" "${lib#/usr}" "${real#/usr}")
  done <<<"$libs"
  # "pkg:arch: /path" (or "pkg1, pkg2: /path") -> "path<TAB>pkg"
  owners="$(dpkg-query -S "${all[@]}" 2>/dev/null |
    sed -n 's/^\([^ ]*\): \(\/.*\)$/\2\t\1/p' | sed 's/:[a-z0-9]*$//; s/:[a-z0-9]*, /, /g')" || true
  while read -r lib; do
    pkg=""
    for c in ${candidates_of[$lib]}; do
      pkg="$(awk -F'\t' -v p="$c" '$1 == p { print $2; exit }' <<<"$owners")"
      [ -n "$pkg" ] && break
    done
    if [ -z "$pkg" ]; then
      found="$(dpkg-query -S "*/$(basename "$lib")" 2>/dev/null | head -1)" || true
      pkg="${found%%:*}"
    fi
    if [ -z "$pkg" ]; then
      echo "runtime_packages: no Debian package owns $lib" >&2
      return 1
    fi
    echo "$pkg"
  done <<<"$libs" | grep -vx 'libc6' | sort -u
}

# The package names of the runtime stage's `apt-get install` (options dropped).
listed() {
  awk '
    /^[[:space:]]*#/ { next }
    { line = $0; cont = sub(/\\[[:space:]]*$/, "", line); buf = buf " " line
      if (cont) next
      inst = buf; buf = ""
      if (inst ~ /^[[:space:]]*FROM[[:space:]]/) { stage = (tolower(inst) ~ /[[:space:]]as[[:space:]]+runtime[[:space:]]*$/) }
      else if (stage && inst ~ /apt-get[[:space:]]+install/) {
        sub(/.*apt-get[[:space:]]+install/, "", inst); sub(/&&.*/, "", inst)
        n = split(inst, w, /[[:space:]]+/)
        for (i = 1; i <= n; i++) if (w[i] != "" && w[i] !~ /^-/) print w[i]
      }
    }' "$1" | sort -u
}

pkgs="$(needed "$@")"
if [ -z "$dockerfile" ]; then
  echo "$pkgs"
  exit 0
fi
have="$(listed "$dockerfile")"
if [ -z "$have" ]; then
  echo "runtime_packages: $dockerfile: no apt-get install in a stage named runtime" >&2
  exit 1
fi
if [ "$pkgs" != "$have" ]; then
  echo "runtime_packages: $dockerfile's runtime stage installs a different set of packages than the binaries need" >&2
  echo "  missing from the Dockerfile: $(comm -23 <(echo "$pkgs") <(echo "$have") | tr '\n' ' ')" >&2
  echo "  not needed (remove):         $(comm -13 <(echo "$pkgs") <(echo "$have") | tr '\n' ' ')" >&2
  exit 1
fi
echo "runtime_packages: $dockerfile installs exactly the $(wc -l <<<"$pkgs") packages that $* need"
