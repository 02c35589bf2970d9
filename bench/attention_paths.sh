#!/usr/bin/env bash
# Attention's two paths in one charlm build, in turns: VKAMP_ATTENTION=fused
# (FlashAttention-2 tiles) and materialized (the stored probabilities, the
# default: engine/src/ops/attention_defaults.txt), N rounds, then the median of each
# and fused/materialized.
# --baseline BIN adds a third column: another build's charlm (say the one
# before the fused path existed), run with the same flags.
#   bench/attention_paths.sh [--size S] [--steps N] [--rounds N] [--baseline BIN] [charlm flags...]
# Prints each run's samples/s and the CPU steal share while it ran.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../scripts/env.sh"
size=small steps=30 rounds=5 baseline="" extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --size) size="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --baseline) baseline="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) extra+=("$1"); shift ;;
  esac
done
[[ $steps =~ ^[0-9]+$ && $rounds =~ ^[0-9]+$ && $rounds -ge 1 ]] ||
  { echo "attention_paths.sh: --steps and --rounds take whole numbers" >&2; exit 2; }
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "attention_paths.sh: no program $baseline" >&2; exit 2; }
bin="$VKAMP_BUILD/samples/charlm"
[ -x "$bin" ] || { echo "attention_paths.sh: build charlm first ($bin)" >&2; exit 2; }
source "$here/turns.sh"
flags=(--size "$size" --max-steps "$steps" --eval-every "$steps" --generate 0 --no-progress "${extra[@]}")
run() {  # PROGRAM PATH
  local before after r
  before=$(head -1 /proc/stat)
  r=$(VKAMP_ATTENTION=$2 "$1" "${flags[@]}" 2>/dev/null | rate)
  after=$(head -1 /proc/stat)
  echo "${r:--} $(steal "$before" "$after")"
}
median() { tr ' ' '\n' | grep -v '^-\?$' | sort -g | awk '{ v[NR] = $1 } END {
  print NR == 0 ? "-" : NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "charlm --size $size, $steps steps, $rounds rounds in turns (samples/s: windows of the block size)"
fused=() mat=() base=()
for i in $(seq "$rounds"); do
  read -r f fs < <(run "$bin" fused)
  read -r m ms < <(run "$bin" materialized)
  line="round $i: fused $f (steal $fs), materialized $m (steal $ms)"
  fused+=("$f"); mat+=("$m")
  if [ -n "$baseline" ]; then
    read -r b bs < <(run "$baseline" materialized)
    base+=("$b"); line+=", baseline $b (steal $bs)"
  fi
  echo "$line"
done
F=$(echo "${fused[*]}" | median) M=$(echo "${mat[*]}" | median)
line="median: fused $F, materialized $M, fused/materialized $(awk -v a="$F" -v b="$M" 'BEGIN { printf "%.3f", a / b }')"
if [ -n "$baseline" ]; then
  B=$(echo "${base[*]}" | median)
  line+=", baseline $B, fused/baseline $(awk -v a="$F" -v b="$B" 'BEGIN { printf "%.3f", a / b }')"
fi
echo "$line"
