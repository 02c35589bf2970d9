#!/usr/bin/env bash
# The loss-scale modes on an NVIDIA GPU: lenet5 and charlm tiny in fp16 with each
# loss-scale mode (dynamic: GradScaler's defaults; auto; the static scale
# that --loss-scale suggest prints), then PyTorch CUDA AMP with GradScaler's
# defaults on the same recipe (bench/torch_loss_scale.py, torch_charlm.py).
# Each run's summary is printed: skipped steps, overflows, final scale, the
# held-out metric, the underflow and headroom lines. Run from the repository
# with an unpacked test bundle (scripts/bundle.sh):
#   bench/loss_scale_gpu.sh BUNDLE_DIR [LENET5_STEPS [CHARLM_STEPS [MODELS]]]
# MODELS: "lenet5 charlm torch" (default) or any part of it.
set -uo pipefail
B="$(cd "$1" && pwd)"
steps=${2:-3000} csteps=${3:-3000} models=${4:-lenet5 charlm torch}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
while IFS='=' read -r name path; do export "$name=$B/$path"; done <"$B/data/paths.env"
data="${VKAMP_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}" text="$B/data/charlm-corpus.txt"
for model in lenet5 charlm; do
  [[ " $models " == *" $model "* ]] || continue
  if [ $model = lenet5 ]; then
    common=(--precision fp16 --max-steps "$steps" --no-progress --data "$data")
  else
    common=(--precision fp16 --max-steps "$csteps" --no-progress --generate 0 --text "$text")
  fi
  echo "## vkamp $model --loss-scale suggest"
  suggestion=$("$B/bin/$model" "${common[@]}" --loss-scale suggest 2>&1)
  echo "$suggestion"
  static=$(echo "$suggestion" | sed -n 's/^loss_scaling_factor: //p')
  for mode in dynamic auto $static; do
    echo "## vkamp $model --loss-scale $mode"
    "$B/bin/$model" "${common[@]}" --loss-scale "$mode" 2>&1 | tail -14
  done
done
[[ " $models " == *" torch "* ]] || exit 0
echo "## torch lenet5, GradScaler defaults"
python3 "$here/torch_loss_scale.py" --steps "$steps" --data "$data"
echo "## torch charlm tiny, GradScaler defaults"
python3 "$here/torch_charlm.py" --device cuda --steps "$csteps" --text "$text" 2>&1 | tail -4
