#!/bin/bash
# Static checks of deploy/Dockerfile (no Docker engine is needed, or available, in CI):
#   - a build stage and a runtime stage (the last, the default target), both Debian 12;
#   - the build stage runs deploy/bootstrap.sh and `bazel build`s exactly the targets this test
#     depends on; the runtime stage takes only what the build stage writes to /out;
#   - every file COPY'd from the build context exists in the repository;
#   - the runtime stage's apt-get install list is exactly the packages providing the libraries
#     `ldd` reports for the built binaries on this machine (deploy/docker/runtime_packages.sh);
#   - a numeric non-root USER; EXPOSE, HEALTHCHECK and ENTRYPOINT / CMD consistent with the image's
#     config (deploy/docker/inferd.yaml) and the binaries copied;
#   - deploy/Dockerfile.dockerignore keeps bazel-* and .git out of the context.
#
# args: Dockerfile Dockerfile.dockerignore runtime_packages.sh docker/inferd.yaml
#       BINARY:LABEL...   (each built binary with the Bazel label the Dockerfile must build)
set -euo pipefail

dockerfile="$1" dockerignore="$2" runtime_packages="$3" image_config="$4"
shift 4
# Runfiles root: the repository layout (the context of `docker build -f deploy/Dockerfile .`).
root="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-inferd}"

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
ok() { echo "ok: $*"; }

# One line per instruction, continuations joined, comments dropped: "STAGE<TAB>INSTR<TAB>ARGS".
# STAGE is the stage's `AS` name (or its index); lines before the first FROM have stage "-".
instructions() {
  awk '
    BEGIN { stage = "-"; n = -1 }
    /^[[:space:]]*#/ { next }
    /^[[:space:]]*$/ { if (buf == "") next }
    {
      line = $0
      cont = sub(/\\[[:space:]]*$/, "", line)
      buf = buf " " line
      if (cont) next
      sub(/^[[:space:]]+/, "", buf); gsub(/[[:space:]]+/, " ", buf)
      split(buf, w, " "); instr = toupper(w[1]); rest = substr(buf, length(w[1]) + 2)
      if (instr == "FROM") {
        n++; stage = n
        if (match(tolower(rest), / as [a-z0-9_.-]+$/)) stage = substr(rest, RSTART + 4)
      }
      print stage "\t" instr "\t" rest
      buf = ""
    }' "$dockerfile"
}
instr_of() {  # STAGE INSTR: the arguments of each such instruction
  instructions | awk -F'\t' -v s="$1" -v i="$2" '$1 == s && $2 == i { print $3 }'
}

# ---- stages and base images
stages="$(instructions | awk -F'\t' '$2 == "FROM" { print $1 }' | tr '\n' ' ')"
[ "$stages" = "build runtime " ] && ok "stages: $stages" ||
  fail "expected stages 'build runtime' (in that order, runtime last), got '$stages'"
release="$(instructions | awk -F'\t' '$1 == "-" && $2 == "ARG" { print $3 }' |
  sed -n 's/^DEBIAN_RELEASE=//p')"
for stage in build runtime; do
  image="$(instructions | awk -F'\t' -v s="$stage" '$1 == s && $2 == "FROM" { print $3 }' |
    sed 's/ [Aa][Ss] .*//; s/\${DEBIAN_RELEASE}/'"$release"'/')"
  case "$image" in
    debian:12 | debian:12-slim | debian:bookworm | debian:bookworm-slim) ok "$stage FROM $image" ;;
    *) fail "$stage stage is not based on Debian 12: FROM $image" ;;
  esac
done

# ---- build stage: bootstrap, bazel build of the expected targets, /out
build_runs="$(instr_of build RUN)"
grep -q 'deploy/bootstrap.sh' <<<"$build_runs" && ok "build runs deploy/bootstrap.sh" ||
  fail "the build stage does not run deploy/bootstrap.sh"
built="$(grep -o 'bazel build [^&]*' <<<"$build_runs" | sed 's/^bazel build //' | tr ' ' '\n' |
  grep '^//' | sort | tr '\n' ' ')"
want=""
for pair in "$@"; do want+="${pair#*:}"$'\n'; done
want="$(printf '%s' "$want" | sort | tr '\n' ' ')"
[ "$built" = "$want" ] && ok "bazel build $built" ||
  fail "the build stage builds '$built'; this test checks the binaries of '$want'"

# ---- COPY sources from the context exist; COPY --from=build takes what the build stage wrote
while IFS=$'\t' read -r stage instr args; do
  [ "$instr" = COPY ] || continue
  read -r -a words <<<"$args"
  from=""
  srcs=()
  for w in "${words[@]}"; do
    case "$w" in
      --from=*) from="${w#--from=}" ;;
      --*) ;;
      *) srcs+=("$w") ;;
    esac
  done
  unset 'srcs[${#srcs[@]}-1]'  # the destination
  for src in "${srcs[@]}"; do
    if [ -n "$from" ]; then
      [ "$from" = build ] || { fail "COPY --from=$from: only the build stage is expected"; continue; }
      name="$(basename "$src")"
      grep -Eq "cp .*bazel-bin/[^ ]*/$name( |$).* /out/" <<<"$build_runs" &&
        ok "COPY --from=build $src (built and copied to /out)" ||
        fail "COPY --from=build $src: the build stage does not copy a bazel-bin/.../$name to /out/"
    elif [ "$src" = . ]; then
      ok "COPY . (the repository)"
    elif [ -e "$root/$src" ]; then
      ok "COPY $src (in the repository)"
    else
      fail "COPY $src: not in the repository (or missing from //deploy:docker_files)"
    fi
  done
done < <(instructions)
for script in $(grep -o 'deploy/[A-Za-z0-9_/.-]*\.sh' <<<"$build_runs" | sort -u); do
  [ -x "$root/$script" ] && ok "build runs $script (executable)" ||
    fail "the build stage runs $script, which is missing or not executable"
done

# ---- runtime libraries: the apt-get install list against ldd of the binaries built here
binaries=()
for pair in "$@"; do binaries+=("${pair%%:*}"); done
if grep -q 'libcudart\.so' <<<"$(ldd "${binaries[@]}" 2>/dev/null)"; then
  # A --config=cuda build (CI's cuda step): the image builds the CPU-only configuration, whose
  # binaries the default run of this check compares; the CUDA toolkit is no Debian package.
  ok "runtime packages: not compared for a --config=cuda build (the image builds without CUDA)"
elif out="$("$runtime_packages" --check "$dockerfile" "${binaries[@]}" 2>&1)"; then
  ok "$out"
  echo "   ($("$runtime_packages" "${binaries[@]}" | tr '\n' ' '))"
else
  fail "runtime packages do not match ldd: $out"
fi

# ---- runtime stage: user, ports, health check, entrypoint
user="$(instr_of runtime USER | tail -1)"
uid="${user%%:*}"
if [[ "$uid" =~ ^[0-9]+$ ]] && [ "$uid" -ne 0 ]; then ok "USER $user (numeric, not root)"; else
  fail "the runtime stage must end with a numeric non-root USER, got '${user:-none}'"; fi

port_of() { sed -n "s/^ *$1: *[^#]*:\([0-9][0-9]*\).*/\1/p" "$image_config"; }
grpc_port="$(port_of grpc_address)" admin_port="$(port_of admin_address)"
metrics_port="$(port_of metrics_address)" http_port="$(port_of http_address)"
exposed="$(instr_of runtime EXPOSE | tr ' ' '\n' | sed 's|/tcp||' | sort -n | tr '\n' ' ')"
want_ports="$(printf '%s\n' $http_port "$grpc_port" "$admin_port" "$metrics_port" | sort -n |
  tr '\n' ' ')"
[ "$exposed" = "$want_ports" ] && ok "EXPOSE $exposed= the config's HTTP, gRPC, admin and metrics ports" ||
  fail "EXPOSE '$exposed' differs from the ports in $image_config: '$want_ports'"

copied_bins="$(instructions | awk -F'\t' '$1 == "runtime" && $2 == "COPY" && $3 ~ /--from=build/ {
  n = split($3, w, " "); for (i = 1; i < n; i++) if (w[i] !~ /^--/) { b = w[i]; sub(/.*\//, "", b); print w[n] "/" b } }' |
  sed 's|//|/|g')"
health="$(instr_of runtime HEALTHCHECK)"
probe="$(sed -n 's/.*CMD \["\([^"]*\)".*/\1/p' <<<"$health")"
if [ -z "$probe" ]; then
  fail "no HEALTHCHECK CMD [...] in the runtime stage"
elif grep -qx "$probe" <<<"$copied_bins"; then
  ok "HEALTHCHECK runs $probe (copied from the build stage)"
else
  fail "HEALTHCHECK runs $probe, which the runtime stage does not copy (copied: $copied_bins)"
fi
grep -q "\"127.0.0.1:$grpc_port\"" <<<"$health" && ok "HEALTHCHECK probes the gRPC port $grpc_port" ||
  fail "HEALTHCHECK does not probe 127.0.0.1:$grpc_port (the config's grpc_address)"

entry="$(instr_of runtime ENTRYPOINT | sed -n 's/^\["\([^"]*\)".*/\1/p')"
grep -qx "$entry" <<<"$copied_bins" && ok "ENTRYPOINT $entry (copied)" ||
  fail "ENTRYPOINT '$entry' is not a binary copied from the build stage"
config_dest="$(instr_of runtime COPY | awk '$1 == "deploy/docker/inferd.yaml" { print $2 }')"
cmd="$(instr_of runtime CMD)"
[ -n "$config_dest" ] && grep -q "\"--config\", \"$config_dest\"" <<<"$cmd" &&
  ok "CMD --config $config_dest (deploy/docker/inferd.yaml)" ||
  fail "CMD '$cmd' does not pass --config with the copied deploy/docker/inferd.yaml ('$config_dest')"

# ---- context exclusions
for pattern in '.git' 'bazel-*'; do
  grep -qxF "$pattern" "$dockerignore" && ok "$(basename "$dockerignore") excludes $pattern" ||
    fail "$(basename "$dockerignore") does not exclude $pattern"
done

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "PASS"
