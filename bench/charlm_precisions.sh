#!/usr/bin/env bash
# charlm's default run (the tiny GPT on the fortunes text, the default
# steps and seed) in each precision: fp32; fp16 with dynamic loss scaling
# (the default); fp16 without scaling; bf16 without scaling. Prints one
# table row per run: the final validation loss, its ratio to fp32's, the
# skipped steps, the overflows the scaler saw (none are injected), the
# final loss scale and the wall time.
#   bench/charlm_precisions.sh [extra charlm flags, e.g. --max-steps 300]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/env.sh"
"$VKAMP_ROOT/scripts/setup.sh" fortunes >/dev/null
"$VKAMP_ROOT/scripts/build.sh" >/dev/null
runs=("fp32|--precision fp32 --loss-scale none" "fp16 + dynamic scaling|--precision fp16"
  "fp16, no scaling|--precision fp16 --loss-scale none" "bf16, no scaling|--precision bf16 --loss-scale none")
printf "| run | val loss | vs fp32 | skipped | overflows | final scale | wall |\n|---|---|---|---|---|---|---|\n"
base=""
for r in "${runs[@]}"; do
  name="${r%%|*}" flags="${r#*|}"
  t0=$(date +%s)
  # shellcheck disable=SC2086
  out=$("$VKAMP_BUILD/samples/charlm" $flags --generate 0 --no-progress "$@" 2>/dev/null)
  t1=$(date +%s)
  val=$(echo "$out" | sed -n 's/^validation loss \([0-9.]*\).*/\1/p')
  skipped=$(echo "$out" | sed -n 's/.*skipped \([0-9]*\), overflows.*/\1/p' | head -1)
  overflows=$(echo "$out" | sed -n 's/.*overflows \([0-9]*\)).*/\1/p' | head -1)
  scale=$(echo "$out" | sed -n 's/.*final scale \([^,]*\),.*/\1/p' | head -1)
  [ -z "$base" ] && base="$val"
  ratio=$(awk -v v="$val" -v b="$base" 'BEGIN { printf "%+.2f%%", 100 * (v - b) / b }')
  printf "| %s | %s | %s | %s | %s | %s | %d s |\n" "$name" "$val" "$ratio" "$skipped" "$overflows" "$scale" $((t1 - t0))
done
