#!/bin/bash
# promtool (Debian's prometheus package) on deploy/prometheus/: the scrape config, the alert and
# recording rules, and the rules' unit tests (alerts_test.yml: synthetic series, expected alerts).
# args: prometheus.yml alerts.yml alerts_test.yml
set -euo pipefail

PROMTOOL="${PROMTOOL:-/usr/bin/promtool}"
if [ ! -x "$PROMTOOL" ]; then
  echo "FAIL: $PROMTOOL not found: install Debian's prometheus package (deploy/bootstrap.sh does)" >&2
  exit 1
fi
config="$1" rules="$2" rules_test="$3"

echo "== promtool check config $config"
"$PROMTOOL" check config "$config"
echo "== promtool check rules $rules"
"$PROMTOOL" check rules "$rules"
echo "== promtool test rules $rules_test"
# promtool resolves rule_files relative to the test file's directory.
(cd "$(dirname "$rules_test")" && "$PROMTOOL" test rules "$(basename "$rules_test")")
echo "PASS"
