#!/bin/bash
# Runs dashboard_metrics.py static with Debian's python3 (standard library only).
# args: dashboard_metrics.py metrics.cc inferd-dashboard.json alerts.yml
set -euo pipefail
exec /usr/bin/python3 "$1" static "$2" "$3" "$4"
