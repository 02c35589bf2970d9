#!/usr/bin/env bash
# Runs a test binary with a display of its own: ctest's runner for test_ui
# (its CROSSCOMPILING_EMULATOR), so that no test starts xvfb-run itself.
# Each run gets its own X authority file: without -f, xvfb-run makes a
# temporary directory and exits 5 when removing it fails, which happened in
# CI with two studio tests running side by side.
set -euo pipefail
auth="$(mktemp "${TMPDIR:-/tmp}/vkamp-xauth-XXXXXX")"
trap 'rm -f "$auth"' EXIT
xvfb-run -a -f "$auth" -s '-screen 0 1600x1000x24' "$@"
