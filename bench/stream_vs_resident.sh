#!/usr/bin/env bash
# The cost of streaming the training set from host memory against keeping
# it on the GPU: a sample (default fashion_mlp) with --data-on-gpu always
# and never, in turns, N rounds. Prints each run's samples/s, the CPU steal
# share while it ran, and each round's ratio streamed / resident. Both runs
# train on identical batches (tests/train/test_streaming.cpp checks it bit
# for bit), so the ratio is the pipeline's overhead alone.
#   bench/stream_vs_resident.sh [--sample NAME] [--rounds N] [--epochs N] [--data DIR] [--device SEL]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/env.sh"
sample=fashion_mlp rounds=5 epochs=1 extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sample) sample="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --epochs) epochs="$2"; shift 2 ;;
    --data|--device) extra+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "stream_vs_resident.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
"$VKAMP_ROOT/scripts/build.sh" >/dev/null
bin="$VKAMP_BUILD/samples/$sample"
source "$(dirname "${BASH_SOURCE[0]}")/turns.sh"
run() {
  local before after r
  before=$(head -1 /proc/stat)
  r=$("$bin" --no-progress --epochs "$epochs" --data-on-gpu "$1" "${extra[@]}" 2>/dev/null | rate)
  after=$(head -1 /proc/stat)
  echo "$r $(steal "$before" "$after")"
}
echo "$sample, $epochs epoch(s), $rounds rounds in turns"
for i in $(seq 1 "$rounds"); do
  read -r res res_steal < <(run always)
  read -r str str_steal < <(run never)
  ratio=$(awk -v a="$str" -v b="$res" 'BEGIN { printf "%.3f", a / b }')
  echo "round $i: resident $res samples/s (steal $res_steal), streamed $str samples/s (steal $str_steal), streamed/resident $ratio"
done
