#!/usr/bin/env bash
# vkamp's fp32 GEMM against PyTorch's (torch.mm on OpenBLAS) on the CPU, shape
# by shape in one run: `vkamp-bench gemm --formats fp32 --peer`, which runs
# bench/gemm_peer.py right after vkamp's runs of each shape and prints the
# BLAS, its threads, the CPU's fp32 peak and each side's share of it.
#   bench/gemm_vs_peer.sh [--rounds N] [vkamp-bench gemm options...]
# --rounds N runs it N times; each run shows the share of CPU time the
# hypervisor stole while it ran (/proc/stat).
# Installs python3-torch and libopenblas0-pthread when missing: Debian's torch
# links the generic libblas.so.3, netlib's reference BLAS without OpenBLAS.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/env.sh"
rounds=1 args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done
"$VKAMP_ROOT/scripts/setup.sh" python3-torch libopenblas0-pthread
"$VKAMP_ROOT/scripts/build.sh" >/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/turns.sh"
for round in $(seq "$rounds"); do
  [ "$rounds" -gt 1 ] && echo "=== round $round of $rounds"
  c0=$(head -1 /proc/stat)
  "$VKAMP_BUILD/bench/vkamp-bench" gemm --formats fp32 --peer "${args[@]}"
  echo "  (CPU steal while it ran: $(steal "$c0" "$(head -1 /proc/stat)"))"
done
