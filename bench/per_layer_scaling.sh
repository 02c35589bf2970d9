#!/bin/sh
# One global loss scale against per-layer scaling on a deep
# narrow tanh MLP with small weights (bench/per_layer_scaling.cpp): the
# validation loss and accuracy, skipped steps and the underflow of the
# stored fp16 gradients, with fp32 as the reference. Results: bench/NOTES.md,
# "Issue 24: per-layer scaling".
#   bench/per_layer_scaling.sh [build dir] [extra options, e.g. --epochs 40]
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
: "${XDG_RUNTIME_DIR:=/tmp/vkamp-xdg-$(id -u)}"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
export XDG_RUNTIME_DIR
exec "$build/bench/per-layer-scaling-bench" --epochs 20 --lr 0.005 "$@"
