#!/usr/bin/env bash
# Quick start, second command: set up, build, and run every test through
# ctest with the Khronos validation layer on (the test main forces it; any
# validation message fails the test). Extra arguments go to ctest, e.g.
# `scripts/test.sh -L shaders`. VKAMP_DEVICE picks the device. Without
# arguments (CI), it then checks the test bundle: scripts/test_bundle.sh packs
# the build and runs a subset of it from a clean directory.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
"$VKAMP_ROOT/scripts/build.sh"
cd "$VKAMP_BUILD"
ctest --output-on-failure --timeout 300 -j "$(nproc)" "$@"
[ $# -gt 0 ] || "$VKAMP_ROOT/scripts/test_bundle.sh"
