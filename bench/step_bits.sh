#!/usr/bin/env bash
# Do two builds train to the same bits? Runs fashion_mlp, lenet5 and charlm
# for STEPS applied steps (default 40) from each build tree, with the same
# seed, and compares every step record of --metrics (less its wall time,
# "step_time") and the saved weights, byte for byte. For refactors that must
# not change a bit:
#
#   bench/step_bits.sh BEFORE_BUILD AFTER_BUILD [STEPS [PRECISIONS]]
#
# PRECISIONS: comma-separated --precision values (default fp16, the
# samples' own), each run and compared in turn: fp32,fp16,bf16.
#
# The environment reaches both sides: on a GPU, against a build older than
# the fused attention (which sums in another order by design),
# compare with VKAMP_ATTENTION=materialized (CPU drivers' default).
#
# Exit status 1 if any sample differs, 2 on bad arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/env.sh"
usage="usage: bench/step_bits.sh BEFORE_BUILD AFTER_BUILD [STEPS [PRECISIONS]]"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
steps=${3:-40}
IFS=, read -r -a precisions <<<"${4:-fp16}"
for b in "$1" "$2"; do
  [ -x "$b/samples/fashion_mlp" ] || { echo "step_bits: no samples/fashion_mlp in $b" >&2; exit 2; }
done
before=$(cd "$1" && pwd) after=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

differ=0
for precision in "${precisions[@]}"; do
for sample in fashion_mlp lenet5 charlm; do
  for side in before after; do
    build=$before
    [ "$side" = after ] && build=$after
    out="$work/$sample-$side"
    # Run from the work folder so that no sample writes beside the sources.
    (cd "$work" && "$build/samples/$sample" --seed 7 --max-steps "$steps" --quiet --precision "$precision" \
      --metrics "$out.jsonl" --save "$out.safetensors" >"$out.log" 2>&1) ||
      { echo "$sample $precision ($side) failed:"; cat "$out.log"; exit 1; }
    sed -E 's/"step_time": [^,}]*[,]? ?//' "$out.jsonl" >"$out.records"
  done
  records=$(wc -l <"$work/$sample-after.records")
  if ! cmp -s "$work/$sample-before.records" "$work/$sample-after.records"; then
    echo "$sample $precision: step records DIFFER; first difference:"
    diff "$work/$sample-before.records" "$work/$sample-after.records" | head -4
    differ=1
  elif ! cmp -s "$work/$sample-before.safetensors" "$work/$sample-after.safetensors"; then
    echo "$sample $precision: the $records records agree, the saved weights DIFFER"
    differ=1
  else
    echo "$sample $precision: same bits ($records step and histogram records, weights $(sha256sum <"$work/$sample-after.safetensors" | cut -c1-16))"
  fi
done
done
exit $differ
