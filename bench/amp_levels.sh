#!/usr/bin/env bash
# Every precision level (--amp-level O0..O3) on fashion_mlp, lenet5, charlm
# and resnet (when that sample is built), one table row per run: the
# held-out result (test accuracy, or charlm's validation loss), the
# training throughput the summary reports (samples/s; a charlm sample is one
# sequence), the activation memory (planned, and by format before reuse)
# and the wall time.
#   bench/amp_levels.sh                           # each sample's default run
#   STEPS=200 bench/amp_levels.sh                 # every run capped at 200 updates
#   MODELS="lenet5 charlm" bench/amp_levels.sh    # some samples only
#   bench/amp_levels.sh --seed 3                  # extra flags go to every run
#   BUILD=0 bench/amp_levels.sh                   # the samples as built, no build first
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/env.sh"
MODELS=${MODELS:-"fashion_mlp lenet5 charlm resnet"}
case " $MODELS " in *" charlm "*) "$VKAMP_ROOT/scripts/setup.sh" fortunes >/dev/null ;; esac
[ "${BUILD:-1}" = 0 ] || "$VKAMP_ROOT/scripts/build.sh" >/dev/null
cap=()
[ -n "${STEPS:-}" ] && cap=(--max-steps "$STEPS")
printf "| sample | level | result | samples/s | activations MiB (by format, before reuse) | wall |\n"
printf "|---|---|---|---|---|---|\n"
for model in $MODELS; do
  bin="$VKAMP_BUILD/samples/$model"
  if [ ! -x "$bin" ]; then
    printf "| %s | - | not built on this branch | | | |\n" "$model"
    continue
  fi
  extra=()
  [ "$model" = charlm ] && extra=(--generate 0)
  [ "$model" = resnet ] && extra=(--save '')  # no export into the working directory
  for level in O0 O1 O2 O3; do
    t0=$(date +%s)
    out=$("$bin" --amp-level "$level" --no-progress "${cap[@]}" "${extra[@]}" "$@" 2>/dev/null) || {
      printf "| %s | %s | failed | | | |\n" "$model" "$level"
      continue
    }
    t1=$(date +%s)
    result=$(echo "$out" | sed -n -e 's/^test accuracy \([0-9.]*%\).*/accuracy \1/p' \
      -e 's/^validation loss \([0-9.]*\).*/val loss \1/p' | head -1)
    rate=$(echo "$out" | sed -n 's/.* \([0-9]*\) samples\/s$/\1/p' | head -1)
    # The split by format, without the other --recompute plan after it.
    memory=$(echo "$out" | sed -n 's/.*activations \([0-9.]*\) ([0-9.]* without reuse: \([^);]*\)[^)]*).*/\1 (\2)/p' | head -1)
    printf "| %s | %s | %s | %s | %s | %d s |\n" "$model" "$level" "$result" "$rate" "$memory" $((t1 - t0))
  done
done
