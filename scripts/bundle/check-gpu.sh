#!/usr/bin/env bash
# The first run of a test bundle on an NVIDIA GPU, in one command (issue 21):
# the device table, every test (the tensor-core GEMM's entries,
# shaders_gemm_mma_coopmat and, through VK_KHR_cooperative_matrix,
# shaders_gemm_mma_khr, run there instead of skipping), the fp16 GEMM's speed
# in the NV and the KHR build (issue 35), attention's two paths on charlm
# medium (fused, the default, and VKAMP_ATTENTION=materialized), each step's
# profile by op class, then vkamp against PyTorch CUDA with the tensor-core
# GEMM as a third column (its charlm medium and gpt2 runs keep both sides'
# profiles by op class).
#
#   check-gpu.sh [gpu_vs_torch.sh options]     e.g. --rounds 1 --workloads gemm,medium
#
# Everything printed also goes to check-gpu-DATE/ in the current directory
# (CHECK_GPU_DIR moves it). Exits 1 if a test failed or a benchmark did.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "${1:-}" in -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
out="${CHECK_GPU_DIR:-$PWD/check-gpu-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out" || exit 2
echo "check-gpu: logs in $out"
"$B/bin/vkamp-info" 2>&1 | tee "$out/vkamp-info.txt"
echo "== tests"
"$B/run-tests.sh" 2>&1 | tee "$out/tests.txt"
tests=${PIPESTATUS[0]}
echo "== tensor-core GEMM tests alone: the NV build, then the KHR build"
"$B/run-tests.sh" '^shaders_gemm_mma_coopmat ' 2>&1 | tail -1 | tee "$out/coopmat-tests.txt"
"$B/run-tests.sh" '^shaders_gemm_mma_khr ' 2>&1 | tail -1 | tee "$out/khr-tests.txt"
echo "== fp16 GEMM on tensor cores: the NV build, then the KHR build (a few seconds each)"
gemm=0
if [ -x "$B/bin/vkamp-bench" ]; then
  for cm in 1 khr; do
    echo "-- VKAMP_COOPMAT=$cm" | tee -a "$out/gemm-nv-khr.txt"
    VKAMP_COOPMAT=$cm "$B/bin/vkamp-bench" gemm --formats fp16 --forms forward --repeats 3 \
      --shape 1024x1024x1024,4096x4096x4096 2>&1 | tee -a "$out/gemm-nv-khr.txt"
    [ "${PIPESTATUS[0]}" = 0 ] || gemm=1
  done
else
  echo "no bin/vkamp-bench in this bundle"
fi
echo "== attention: fused and materialized, charlm medium fp16, 100 steps, --profile"
text=(); [ -f "$B/data/charlm-corpus.txt" ] && text=(--text "$B/data/charlm-corpus.txt")
for path in fused materialized; do
  VKAMP_ATTENTION=$path "$B/bin/charlm" "${text[@]}" --size medium --batch 64 --max-steps 100 --eval-every 100 --generate 0 \
    --precision fp16 --profile --no-progress >"$out/attention-$path.txt" 2>&1
  echo "  $path (exit $?): $(grep -oE '[0-9.]+ samples/s' "$out/attention-$path.txt" | head -1);" \
    "$(grep -E '^ +(attention|gemm) ' "$out/attention-$path.txt" | tr -s ' ' | tr '\n' ';')"
done | tee "$out/attention.txt"
echo "== benchmark"
"$B/bench/gpu_vs_torch.sh" --coopmat both --log "$out/bench" "$@" 2>&1 | tee "$out/bench.txt"
bench=${PIPESTATUS[0]}
echo "check-gpu: tests exit $tests, NV/KHR GEMM bench exit $gemm, benchmark exit $bench; logs in $out"
[ "$tests" = 0 ] && [ "$gemm" = 0 ] && [ "$bench" = 0 ]
