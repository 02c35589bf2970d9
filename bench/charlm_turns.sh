#!/usr/bin/env bash
# One charlm build under several environment settings, in turns: each
# SETTING (VAR=value, or several joined by commas) is a column, run once a
# round for N rounds; then each column's median and its ratio to the first.
# --baseline BIN adds a column: another build's charlm (say the one before a
# change), with the same flags and none of the settings. Each column runs
# once first, untimed, so the pipeline cache holds its pipelines before
# the rounds (a cold first run compiles them: several times slower).
#   bench/charlm_turns.sh [--size S] [--steps N] [--rounds N] [--baseline BIN] SETTING... [-- charlm flags...]
#   e.g. bench/charlm_turns.sh VKAMP_FUSE_ACT_GRAD=1 VKAMP_FUSE_ACT_GRAD=0
# Prints each run's samples/s and the CPU steal share while it ran.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../scripts/env.sh"
size=small steps=30 rounds=5 baseline="" settings=() extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --size) size="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --baseline) baseline="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *=*) settings+=("$1"); shift ;;
    *) echo "charlm_turns.sh: '$1' is no SETTING (VAR=value) or option; charlm's flags go after --" >&2; exit 2 ;;
  esac
done
[[ $steps =~ ^[0-9]+$ && $rounds =~ ^[0-9]+$ && $rounds -ge 1 ]] ||
  { echo "charlm_turns.sh: --steps and --rounds take whole numbers" >&2; exit 2; }
[ ${#settings[@]} -ge 1 ] || { echo "charlm_turns.sh: name at least one SETTING (VAR=value)" >&2; exit 2; }
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "charlm_turns.sh: no program $baseline" >&2; exit 2; }
bin="$VKAMP_BUILD/samples/charlm"
[ -x "$bin" ] || { echo "charlm_turns.sh: build charlm first ($bin)" >&2; exit 2; }
source "$here/turns.sh"
flags=(--size "$size" --max-steps "$steps" --eval-every "$steps" --generate 0 --no-progress "${extra[@]}")
run() {  # PROGRAM SETTING ("" for none)
  local before after r
  local -a vars=()
  [ -z "$2" ] || IFS=, read -r -a vars <<< "$2"
  before=$(head -1 /proc/stat)
  r=$(env "${vars[@]}" "$1" "${flags[@]}" 2>/dev/null | rate)
  after=$(head -1 /proc/stat)
  echo "${r:--} $(steal "$before" "$after")"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.3f", a / b }'; }
columns=("${settings[@]}")
[ -z "$baseline" ] || columns+=("baseline")
echo "charlm --size $size, $steps steps, $rounds rounds in turns (samples/s: windows of the block size)"
run_column() {  # INDEX
  if [ "${columns[$1]}" = baseline ]; then run "$baseline" ""; else run "$bin" "${columns[$1]}"; fi
}
for c in "${!columns[@]}"; do run_column "$c" >/dev/null; done
declare -A rates
for i in $(seq "$rounds"); do
  line="round $i:"
  for c in "${!columns[@]}"; do
    read -r r s < <(run_column "$c")
    rates[$c]+="$r "
    line+=" ${columns[$c]} $r (steal $s);"
  done
  echo "${line%;}"
done
first=$(echo "${rates[0]}" | median)
line="median:"
for c in "${!columns[@]}"; do
  m=$(echo "${rates[$c]}" | median)
  line+=" ${columns[$c]} $m"
  [ "$c" = 0 ] || line+=" ($(ratio "$m" "$first") of the first)"
  line+=";"
done
echo "${line%;}"
