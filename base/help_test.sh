#!/bin/bash
# Checks a binary's command line (base/flags.h): `BINARY [WORDS...] --help` exits 0 and lists
# FLAG, and `BINARY [WORDS...] --no-such-flag` exits non-zero naming the flag.
#
#   help_test.sh BINARY FLAG [WORDS...]      e.g. help_test.sh inferctl --runs run
set -u
binary="$1" flag="$2"
shift 2
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
out="$("$binary" "$@" --help 2>&1)"
rc=$?
[[ $rc -eq 0 ]] || fail "'$binary $* --help' exited $rc: $out"
grep -q -e "$flag" <<<"$out" || fail "'$binary $* --help' does not list $flag: $out"
err="$("$binary" "$@" --no-such-flag 2>&1)"
rc=$?
[[ $rc -ne 0 ]] || fail "'$binary $* --no-such-flag' exited 0"
grep -q -e "no-such-flag" <<<"$err" || fail "'$binary $* --no-such-flag' does not name it: $err"
echo "PASS: $(basename "$binary") $* --help lists $flag; an unknown flag exits $rc"
