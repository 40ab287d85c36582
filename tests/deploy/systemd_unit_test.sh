#!/bin/bash
# systemd-analyze on deploy/systemd/inferd.service: `verify` (syntax, directives, the ExecStart
# binary; any warning fails the test) and `security --offline` (the hardening's exposure score
# must stay at most 3.0 of 10). Skipped, with a message, where systemd is not installed.
# args: inferd.service inferd (the binary ExecStart names, substituted for the installed path)
set -euo pipefail

unit="$1" inferd="$2"
if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "SKIP: systemd-analyze not installed (Debian package systemd); inferd.service not verified"
  exit 0
fi
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
# The unit runs /usr/local/bin/inferd; verify checks that it exists and is executable.
grep -q '^ExecStart=/usr/local/bin/inferd --config /etc/inferd/inferd.yaml$' "$unit" ||
  { echo "FAIL: ExecStart is not '/usr/local/bin/inferd --config /etc/inferd/inferd.yaml'" >&2; exit 1; }
grep -q '^ExecReload=/bin/kill -HUP $MAINPID$' "$unit" ||
  { echo "FAIL: ExecReload is not '/bin/kill -HUP \$MAINPID' (inferd reloads its repository on SIGHUP)" >&2; exit 1; }
sed "s|^ExecStart=/usr/local/bin/inferd |ExecStart=$(readlink -f "$inferd") |" "$unit" > "$tmp/inferd.service"

echo "== systemd-analyze verify inferd.service"
if ! out="$(systemd-analyze verify "$tmp/inferd.service" 2>&1)"; then
  echo "$out" >&2
  echo "FAIL: systemd-analyze verify" >&2
  exit 1
fi
if [ -n "$out" ]; then
  echo "$out" >&2
  echo "FAIL: systemd-analyze verify printed warnings" >&2
  exit 1
fi
echo "ok: no errors, no warnings"

echo "== systemd-analyze security --offline=yes inferd.service"
if grep -q -- '--offline' <<< "$(systemd-analyze security --help 2>&1)"; then
  out="$(systemd-analyze security --offline=yes --threshold=30 "$tmp/inferd.service" 2>&1)" || {
    echo "$out" >&2
    echo "FAIL: exposure above 3.0 (hardening removed?)" >&2
    exit 1
  }
  grep 'Overall exposure level' <<<"$out"
else
  echo "skipped: this systemd-analyze has no --offline (systemd < 250)"
fi
echo "PASS"
