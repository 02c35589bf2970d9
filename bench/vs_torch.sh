#!/usr/bin/env bash
# A sample against PyTorch on the CPU, side by side in one run: the same
# network, batch, momentum SGD (lr 0.05, momentum 0.9, the sample's
# schedule) and data. PyTorch's GEMMs run on OpenBLAS with one thread per
# core; its other ops on --threads intra-op threads (default 1, measured
# fastest on 2 cores: bench/NOTES.md, "PyTorch on OpenBLAS"). Prints
# samples/s, the ratios, test accuracy and the AMP share of vkamp's step.
#   bench/vs_torch.sh [--model mlp|lenet5] [--epochs N] [--batch N] [--threads N] [--device SEL]
#                     [--data DIR] [--rounds N]
# mlp: fashion_mlp (784-256-256-10, batch 128, constant rate);
# lenet5: lenet5 (batch 64, cosine schedule).
# --rounds N runs the three N times in turns and prints each round's ratios;
# every run also shows the share of CPU time the hypervisor stole while it
# ran (/proc/stat), since a virtual machine's neighbours move absolute rates.
# Installs python3-torch (Debian) and OpenBLAS when missing: Debian's torch
# links the generic libblas.so.3, netlib's reference BLAS unless
# libopenblas0-pthread is installed. The PyTorch run prints which one it used.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/env.sh"
model=mlp epochs=1 batch="" threads=1 device=() data=() rounds=1
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model="$2"; shift 2 ;;
    --epochs) epochs="$2"; shift 2 ;;
    --batch) batch="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --device) device=(--device "$2"); shift 2 ;;
    --data) data=(--data "$2"); shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "vs_torch.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$model" in
  mlp) sample=fashion_mlp; batch="${batch:-128}" schedule=constant ;;
  lenet5) sample=lenet5; batch="${batch:-64}" schedule=cosine ;;
  *) echo "vs_torch.sh: --model is mlp or lenet5, not $model" >&2; exit 2 ;;
esac
"$VKAMP_ROOT/scripts/setup.sh" python3-torch libopenblas0-pthread
"$VKAMP_ROOT/scripts/build.sh" >/dev/null
common=(--epochs "$epochs" --batch "$batch" --lr 0.05 --momentum 0.9 --lr-schedule "$schedule" --no-progress
  "${device[@]}" "${data[@]}")
source "$(dirname "${BASH_SOURCE[0]}")/turns.sh"
# Runs a command, prints its output and the steal line; its output is left in $out.
timed() {
  local c0
  c0=$(head -1 /proc/stat)
  out=$("$@")
  echo "$out"
  echo "  (CPU steal while it ran: $(steal "$c0" "$(head -1 /proc/stat)"))"
}

for round in $(seq "$rounds"); do
  [ "$rounds" -gt 1 ] && echo "=== round $round of $rounds"
  echo "== vkamp $sample fp32"
  timed "$VKAMP_BUILD/samples/$sample" "${common[@]}" --precision fp32 --loss-scale none 2>/dev/null
  r32=$(echo "$out" | rate)
  echo "== vkamp $sample fp16, dynamic loss scaling"
  timed "$VKAMP_BUILD/samples/$sample" "${common[@]}" --precision fp16 2>/dev/null
  r16=$(echo "$out" | rate)
  echo "== PyTorch"
  timed /usr/bin/python3 "$VKAMP_ROOT/bench/torch_peer.py" --model "$model" --epochs "$epochs" --batch "$batch" \
    --lr 0.05 --momentum 0.9 --lr-schedule "$schedule" --threads "$threads" "${data[@]}"
  rpt=$(echo "$out" | rate)
  echo
  printf "samples/s: vkamp fp32 %s, vkamp fp16 %s, pytorch %s\n" "$r32" "$r16" "$rpt"
  awk -v a="$r32" -v b="$r16" -v p="$rpt" 'BEGIN {
    printf "ratio to pytorch: fp32 %.3f, fp16 %.3f; fp16/fp32 %.2f\n", a / p, b / p, b / a }'
done
