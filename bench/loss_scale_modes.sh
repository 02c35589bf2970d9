#!/usr/bin/env bash
# The loss-scale modes side by side on lenet5 and charlm, fp16:
# dynamic (PyTorch GradScaler's defaults: 2^16, x2 every 2000 clean steps,
# /2 on an overflow), auto (dynamic for --auto-warmup steps, then the
# chooser's power of two, re-checked on the GPU), and the static scale
# that `--loss-scale suggest` prints. One table row per run: skipped steps,
# overflows, final scale, the held-out metric (lenet5's test accuracy,
# charlm's validation loss), the gradient elements stored as zero over the
# run's histograms (exact zeros plus flushes: compare runs) and the
# underflow at the run's final scale measured on the dynamic run's
# gradients (bench/underflow_from_metrics.py).
#   bench/loss_scale_modes.sh [--steps N] [--models "lenet5 charlm"] [extra sample flags]
# Short runs by default (--steps 300); the torch side is
# bench/torch_loss_scale.py, for a CUDA machine.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/env.sh"
steps=300
models="lenet5 charlm"
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    *) break ;;
  esac
done
for model in $models; do
  [ -x "$VKAMP_BUILD/samples/$model" ] || { echo "build $model first (scripts/build.sh)" >&2; exit 2; }
done
case " $models " in *" charlm "*) "$VKAMP_ROOT/scripts/setup.sh" fortunes >/dev/null ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
here="$(dirname "${BASH_SOURCE[0]}")"
printf "| model | mode | skipped | overflows | final scale | held-out | zero %% | underflow %% at final scale |\n"
printf "|---|---|---|---|---|---|---|---|\n"
for model in $models; do
  bin="$VKAMP_BUILD/samples/$model"
  common=(--precision fp16 --max-steps "$steps" --no-progress --histogram-interval 10)
  [ "$model" = charlm ] && common+=(--generate 0)
  # shellcheck disable=SC2086
  suggestion=$("$bin" "${common[@]}" --loss-scale suggest "$@" 2>/dev/null)
  static=$(echo "$suggestion" | sed -n 's/^loss_scaling_factor: //p')
  for mode in dynamic auto "$static"; do
    label="$mode"
    [ "$mode" = "$static" ] && label="static $static (suggested)"
    out=$("$bin" "${common[@]}" --loss-scale "$mode" --metrics "$tmp/$model-$mode.jsonl" "$@" 2>/dev/null)
    skipped=$(echo "$out" | sed -n 's/.*skipped \([0-9]*\), overflows.*/\1/p' | tail -1)
    overflows=$(echo "$out" | sed -n 's/.*overflows \([0-9]*\)).*/\1/p' | tail -1)
    scale=$(echo "$out" | sed -n 's/.*final scale \([^,]*\),.*/\1/p' | tail -1)
    held=$(echo "$out" | sed -n -e 's/^test accuracy \(.*\)$/acc \1/p' -e 's/^validation loss \([0-9.]*\).*/val loss \1/p')
    read -r zero under < <(python3 "$here/underflow_from_metrics.py" "$tmp/$model-$mode.jsonl" \
      --reference "$tmp/$model-dynamic.jsonl" --scale "$scale")
    printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n" "$model" "$label" "$skipped" "$overflows" "$scale" "$held" \
      "$zero" "$under"
  done
done
