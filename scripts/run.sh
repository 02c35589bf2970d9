#!/usr/bin/env bash
# Quick start, first command: set up, build, and run the main job on the
# default device (VKAMP_DEVICE or --device picks another): the device table
# and the GEMM benchmark. Extra arguments go to vkamp-bench.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
"$VKAMP_ROOT/scripts/build.sh"
"$VKAMP_BUILD/samples/vkamp-info"
"$VKAMP_BUILD/bench/vkamp-bench" gemm "$@"
