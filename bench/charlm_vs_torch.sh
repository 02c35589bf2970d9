#!/usr/bin/env bash
# charlm against PyTorch on the CPU, in turns: the same GPT (tiny: 2 layers,
# 4 heads, 64 channels, block 64), batch 16, corpus, split and recipe
# (AdamW, decay on matrices, warmup then cosine, clipping at 1.0;
# bench/torch_charlm.py is the peer). Prints tokens/s of each, the ratio,
# each run's final validation loss, and the CPU steal while it ran.
#   bench/charlm_vs_torch.sh [--steps N] [--rounds N] [--threads N] [--device SEL]
# PyTorch's GEMMs run on OpenBLAS (installed here when missing; the peer
# prints the BLAS it mapped). vkamp runs fp32 and fp16 with dynamic loss
# scaling. Evaluation time is left out of both rates.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/env.sh"
steps=200 rounds=1 threads=2 device=()
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --device) device=(--device "$2"); shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "charlm_vs_torch.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
"$VKAMP_ROOT/scripts/setup.sh" python3-torch libopenblas0-pthread fortunes
"$VKAMP_ROOT/scripts/build.sh" >/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/turns.sh"
block=64 batch=16
common=(--max-steps "$steps" --eval-every "$steps" --batch "$batch" --generate 0 --no-progress "${device[@]}")
timed() {
  local c0
  c0=$(head -1 /proc/stat)
  out=$("$@")
  echo "$out" | grep -E "validation loss|samples/s|RESULT|BLAS|threads" || true
  echo "  (CPU steal while it ran: $(steal "$c0" "$(head -1 /proc/stat)"))"
}
for round in $(seq "$rounds"); do
  [ "$rounds" -gt 1 ] && echo "=== round $round of $rounds"
  echo "== vkamp charlm fp32"
  timed "$VKAMP_BUILD/samples/charlm" "${common[@]}" --precision fp32 --loss-scale none 2>/dev/null
  t32=$(echo "$out" | rate | awk -v b=$block '{ print $1 * b }')
  echo "== vkamp charlm fp16, dynamic loss scaling"
  timed "$VKAMP_BUILD/samples/charlm" "${common[@]}" --precision fp16 2>/dev/null
  t16=$(echo "$out" | rate | awk -v b=$block '{ print $1 * b }')
  echo "== PyTorch (fp32)"
  timed /usr/bin/python3 "$VKAMP_ROOT/bench/torch_charlm.py" --steps "$steps" --batch "$batch" --block-size $block \
    --eval-every "$steps" --threads "$threads"
  tpt=$(echo "$out" | sed -n 's/.*tokens_per_s=\([0-9.]*\).*/\1/p')
  echo
  printf "tokens/s: vkamp fp32 %s, vkamp fp16 %s, pytorch %s\n" "$t32" "$t16" "$tpt"
  awk -v a="$t32" -v b="$t16" -v p="$tpt" 'BEGIN { printf "ratio to pytorch: fp32 %.3f, fp16 %.3f\n", a / p, b / p }'
done
