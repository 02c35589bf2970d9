#!/usr/bin/env bash
# fashion_mlp against PyTorch on the CPU, side by side in one run: the same
# 784-256-256-10 MLP, batch, momentum SGD and data. Prints samples/s, the
# ratios, test accuracy and the AMP share of vkamp's step.
#   bench/mlp_vs_torch.sh [--epochs N] [--batch N] [--device SEL]
# Installs python3-torch (Debian) when missing.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/env.sh"
epochs=1 batch=128 device=()
while [ $# -gt 0 ]; do
  case "$1" in
    --epochs) epochs="$2"; shift 2 ;;
    --batch) batch="$2"; shift 2 ;;
    --device) device=(--device "$2"); shift 2 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "mlp_vs_torch.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
"$VKAMP_ROOT/scripts/setup.sh" python3-torch
"$VKAMP_ROOT/scripts/build.sh" >/dev/null
common=(--epochs "$epochs" --batch "$batch" --lr 0.05 --no-progress "${device[@]}")
rate() { sed -n 's/.* \([0-9.]*\) samples\/s.*/\1/p' | head -1; }

echo "== vkamp fp32"
out32=$("$VKAMP_BUILD/samples/fashion_mlp" "${common[@]}" --precision fp32 --loss-scale none 2>/dev/null)
echo "$out32"
echo "== vkamp fp16, dynamic loss scaling"
out16=$("$VKAMP_BUILD/samples/fashion_mlp" "${common[@]}" --precision fp16 2>/dev/null)
echo "$out16"
echo "== PyTorch"
outpt=$(/usr/bin/python3 "$VKAMP_ROOT/bench/torch_mlp.py" --epochs "$epochs" --batch "$batch" --lr 0.05)
echo "$outpt"

r32=$(echo "$out32" | rate); r16=$(echo "$out16" | rate); rpt=$(echo "$outpt" | rate)
echo
printf "samples/s: vkamp fp32 %s, vkamp fp16 %s, pytorch %s\n" "$r32" "$r16" "$rpt"
awk -v a="$r32" -v b="$r16" -v p="$rpt" 'BEGIN {
  printf "ratio to pytorch: fp32 %.3f, fp16 %.3f; fp16/fp32 %.2f\n", a / p, b / p, b / a }'
