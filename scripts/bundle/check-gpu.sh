#!/usr/bin/env bash
# The first run of a test bundle on an NVIDIA GPU, in one command (issue 21):
# the device table, every test (the tensor-core GEMM's entries,
# shaders_gemm_mma_coopmat, run there instead of skipping), then vkamp
# against PyTorch CUDA with the tensor-core GEMM as a third column (its
# charlm medium and gpt2 runs keep both sides' profiles by op class), and
# attention's two paths on charlm medium (fused, the default, and
# VKAMP_ATTENTION=materialized), each step's profile by op class.
#
#   check-gpu.sh [gpu_vs_torch.sh options]     e.g. --rounds 1 --workloads gemm,medium
#
# Everything printed also goes to check-gpu-DATE/ in the current directory
# (CHECK_GPU_DIR moves it). Exits 1 if a test failed or the benchmark did.
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
echo "== tensor-core GEMM tests alone"
"$B/run-tests.sh" '^shaders_gemm_mma_coopmat ' 2>&1 | tail -1 | tee "$out/coopmat-tests.txt"
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
echo "check-gpu: tests exit $tests, benchmark exit $bench; logs in $out"
[ "$tests" = 0 ] && [ "$bench" = 0 ]
