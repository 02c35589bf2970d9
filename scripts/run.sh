#!/usr/bin/env bash
# Quick start, first command: set up, build, and run the main job on the
# default device (VKAMP_DEVICE or --device picks another): the device table,
# a quick GEMM benchmark table, then fashion_mlp trained headless in fp16
# with dynamic loss scaling, its dashboard drawn into build/fashion_mlp.png
# (offscreen: no display needed). Extra arguments go to fashion_mlp.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
"$VKAMP_ROOT/scripts/build.sh"
"$VKAMP_BUILD/samples/vkamp-info"
"$VKAMP_BUILD/bench/vkamp-bench" gemm --quick
"$VKAMP_BUILD/samples/fashion_mlp" --report "$VKAMP_BUILD/fashion_mlp.png" "$@"
