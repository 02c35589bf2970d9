#!/usr/bin/env bash
# A GPU's check from a test bundle, in one command that fits a 15-minute
# loan (about 8 minutes on an H100 before step 8, which adds an estimated 4
# to 5 minutes, not yet measured: the QLoRA rate's host quantization of a
# 1.5B base is most of its part), in this order:
#   1. the device table (vkamp-info, which names the GEMM kernel per class);
#   2. the GEMM tuning sweep (vkamp-bench gemm --tune), printing its table and
#      writing the winners to the per-device cache every later step reads;
#   3. the tensor-core tests: the GEMM's NV build (shaders_gemm_mma_coopmat),
#      its KHR build (shaders_gemm_mma_khr), then the fused attention's on
#      fragments (shaders_attention_mma_coopmat, _khr), and the fp16 GEMM's
#      speed forced onto each build (VKAMP_COOPMAT=1 and =khr, 4096^3 forward);
#   4. bench/gpu_vs_torch.sh, 1 round: gemm 1024^3/4096^3/8192^3 forward, dX
#      and dW, charlm medium and small, lenet5, mlp (VKAMP_COOPMAT at its
#      default: the tuned kernels; charlm medium keeps its --profile);
#   5. charlm medium on each attention path (fused, mma, materialized),
#      then on the default one with VKAMP_FUSE_ACT_GRAD=0 and with
#      VKAMP_FUSE_RESIDUAL_GRAD=0, --profile: the rates and the op classes';
#   6. charlm gpt2 (12L 12H d768 T1024 b8) in fp16 against PyTorch, 20
#      steps, 1 round: tokens/s, both profiles and both activation memories
#      (the 24 GiB question), unless --vkamp-only leaves PyTorch out; then
#      what gpt2 holds on the fused and mma paths (charlm --dry-run);
#   7. the attention kernels alone (vkamp-bench attention): charlm medium's
#      and gpt2's shapes, the materialized path and the fused ones (fused,
#      mma) at each tile size of a sweep (the defaults among them), fp16; then
#      PyTorch's at the same shapes (bench/attention_peer.py: SDPA's math,
#      flash and memory-efficient backends), unless --vkamp-only;
#   8. issue 53: the GEMM tuner's sweep of the blocks' paths (vkamp-bench
#      quant --tune: shared-memory tiles and the direct path's blocks, per
#      class and block type, winners to the cache), then a frozen linear
#      layer's forward and dX with W in ggml blocks (q8_0, q4_0, q4_k, q6_k)
#      on the tuned paths against fp16 at Llama's 2048-wide shapes
#      (vkamp-bench quant); then the forward pass of the same Q8_0 and
#      Q4_K_M GGUF model in vkamp and in llama.cpp's Vulkan backend
#      (bench/gguf_vs_llamacpp.sh: hidden 2048, 8 layers, 512 tokens), and
#      vkamp-generate's prompt (--vkamp prefill) on the Q4_K_M file, where
#      the bundle carries llama.cpp (scripts/bundle.sh with
#      VKAMP_BUNDLE_LLAMACPP=1; without it the step says so and goes on);
#      then QLoRA's training throughput (bench/qlora_rate.sh: qwen2.5-1.5b
#      in Q8_0 and Q4_K, LoRA r 16, 128 tokens, 20 steps), the line to hold
#      against qvac-fabric's published Vulkan rates;
#   9. the rest of the suite, in whatever time is left (timeout).
#
#   check-gpu.sh [--vkamp-only] [--quick] [--budget S] [--tune-shapes LIST] [gpu_vs_torch.sh options]
#
# --budget S (default 480) bounds the whole run: step 9 gets what is left.
# --quick checks the script, not the GPU: tiny shapes, gpu_vs_torch.sh
# --quick with PyTorch on the CPU (fp32), the attention peer likewise,
# charlm tiny for steps 5 and 6, and each step's time limit 3x (a CPU
# driver runs it in about 10 minutes; with VKAMP_COOPMAT=emulate the sweep
# and tests run the emulated tensor-core GEMM).
# --tune-shapes LIST: the sweep's shapes (default: its own, the models' and
# square layers). --vkamp-only (machines without PyTorch CUDA) and any other
# option go to gpu_vs_torch.sh. Everything printed also goes to
# check-gpu-DATE/ in the current directory (CHECK_GPU_DIR moves it). Exits 1
# if a test or a benchmark step failed.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
budget=480 tune_shapes="" bench_args=() quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --budget) budget=${2:?--budget needs seconds}; shift 2 ;;
    --tune-shapes) tune_shapes=${2:?--tune-shapes needs a list}; shift 2 ;;
    --quick) quick=1; shift ;;
    *) bench_args+=("$1"); shift ;;
  esac
done
[[ $budget =~ ^[0-9]+$ ]] || { echo "check-gpu: --budget needs whole seconds, got '$budget'"; exit 2; }
# charlm medium (6L 6H d384 T256 b64) for step 5; --quick: tiny.
gpt=(--size medium --batch 64) gpt_steps=60 gemm_shape=4096x4096x4096 slow=1 peer_quick=()
attn=(--size medium,gpt2 --tiles device,16x32,32x32,48x32,64x16,64x64,128x16,128x32,256x16)
gpt2_set=(--rounds 1 --workloads gpt2 --steps 20 --precisions fp16) gpt2_dry=(--size gpt2 --batch 8)
bench_set=(--rounds 1 --workloads gemm,medium,small,lenet5,mlp --shapes 1024x1024x1024,4096x4096x4096,8192x8192x8192
           --forms forward,dx,dw --steps 150 --epochs 1)
quant=() qlora=() gguf=(--hidden 2048 --layers 8 --heads 32 --ffn 5632 --tokens 512 --runs 5 --rounds 2)
if [ "$quick" = 1 ]; then
  [ -n "$tune_shapes" ] || tune_shapes=64x64x64,200x136x72
  bench_set=(--quick --torch-device cpu)
  gpt2_set=(--quick --torch-device cpu --workloads tiny) gpt2_dry=(--size tiny)
  gpt=(--size tiny) gpt_steps=5 gemm_shape=128x128x128 slow=3
  attn=(--size tiny --tiles device,32x16 --repeats 2) peer_quick=(--device cpu --dtype fp32)
  quant=(--quick) qlora=(--shape llama-tiny --seq-len 32 --steps 3) gguf=(--hidden 256 --layers 1 --heads 4 --ffn 768 --tokens 32 --runs 1 --rounds 1)
fi
out="${CHECK_GPU_DIR:-$PWD/check-gpu-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out" || exit 2
echo "check-gpu: logs in $out; at most ${budget} s"
# The bundle's data (the corpus) and the pipeline cache the steps share.
while IFS='=' read -r name path; do export "$name=$B/$path"; done <"$B/data/paths.env"
export VKAMP_PIPELINE_CACHE="${VKAMP_PIPELINE_CACHE:-$out/pipeline-cache.bin}"
left() { echo $((budget - SECONDS)); }
status=0
step() { echo; echo "== [$SECONDS s] $*"; }

step "device"
"$B/bin/vkamp-info" 2>&1 | tee "$out/vkamp-info.txt"

step "GEMM tuning sweep"
tune=("$B/bin/vkamp-bench" gemm --tune --max-tune-s 6)
[ -z "$tune_shapes" ] || tune+=(--shapes "$tune_shapes")
timeout $((150 * slow)) "${tune[@]}" 2>&1 | tee "$out/tune.txt"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "check-gpu: the sweep failed"; status=1; }

step "tensor-core tests: the GEMM's NV and KHR builds, then the attention's"
for entry in shaders_gemm_mma_coopmat shaders_gemm_mma_khr shaders_attention_mma_coopmat shaders_attention_mma_khr; do
  timeout $((90 * slow)) "$B/run-tests.sh" "^$entry " 2>&1 | tee "$out/$entry.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
done
for cm in 1 khr; do
  echo "-- VKAMP_COOPMAT=$cm" | tee -a "$out/gemm-nv-khr.txt"
  VKAMP_COOPMAT=$cm timeout $((30 * slow)) "$B/bin/vkamp-bench" gemm --formats fp16 --forms forward --repeats 3 \
    --shape "$gemm_shape" 2>&1 | tee -a "$out/gemm-nv-khr.txt"
  # A device without that build says so and exits 1: not this check's failure.
done

step "vkamp against PyTorch"
timeout $((200 * slow)) "$B/bench/gpu_vs_torch.sh" "${bench_set[@]}" --log "$out/bench" "${bench_args[@]}" 2>&1 |
  tee "$out/bench.txt"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "check-gpu: the benchmark failed"; status=1; }

step "charlm ${gpt[*]}, fp16, --profile: each attention path, then the default without each backward fusion"
text=(); [ ! -f "$B/data/charlm-corpus.txt" ] || text=(--text "$B/data/charlm-corpus.txt")
# Each run's rate and its profile's op classes: a fusion's saving (about
# 0.1 ms a step by bytes, below one run's noise) shows in the classes'
# timestamps, not in the rate.
for setting in VKAMP_ATTENTION=fused VKAMP_ATTENTION=mma VKAMP_ATTENTION=materialized VKAMP_FUSE_ACT_GRAD=0 \
  VKAMP_FUSE_RESIDUAL_GRAD=0; do
  log="$out/charlm-${setting#VKAMP_}.txt"
  env "$setting" timeout $((45 * slow)) "$B/bin/charlm" "${gpt[@]}" --max-steps "$gpt_steps" --eval-every "$gpt_steps" \
    --generate 0 --precision fp16 --profile --no-progress "${text[@]}" >"$log" 2>&1
  rc=$?
  [ "$rc" = 0 ] || { echo "check-gpu: charlm with $setting failed ($rc)"; status=1; }
  echo "  $setting (exit $rc): $(grep -oE '[0-9.]+ (samples|tokens)/s' "$log" | head -1);" \
    "$(grep -E '^    [a-z_]+ +[0-9.]+ +[0-9.]+%' "$log" | tr -s ' ' | tr '\n' ';')"
done | tee "$out/charlm-settings.txt"
grep -q "check-gpu: charlm" "$out/charlm-settings.txt" && status=1
cat "$out/charlm-ATTENTION=fused.txt" >>"$out/charlm-profile.txt"

step "charlm ${gpt2_set[*]}: speed, profile and memory against PyTorch"
timeout $((120 * slow)) "$B/bench/gpu_vs_torch.sh" "${gpt2_set[@]}" --log "$out/gpt2" "${bench_args[@]}" 2>&1 |
  tee "$out/gpt2.txt"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "check-gpu: the gpt2 run failed"; status=1; }
# The run above took the default attention path; what the fused ones would
# hold (the 24 GiB question) needs no training: --dry-run.
for path in fused mma; do
  echo "  $path: $(VKAMP_ATTENTION=$path timeout $((60 * slow)) "$B/bin/charlm" "${gpt2_dry[@]}" --precision fp16 \
    --dry-run --no-progress "${text[@]}" 2>&1 | grep -E 'device memory|error' | tr -s ' ' | tr '\n' ';')"
done | tee "$out/gpt2-memory.txt"

step "attention kernels: vkamp-bench attention ${attn[*]}"
timeout $((90 * slow)) "$B/bin/vkamp-bench" attention "${attn[@]}" 2>&1 | tee "$out/attention-kernels.txt"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "check-gpu: the attention benchmark failed"; status=1; }
if [[ " ${bench_args[*]-} " != *" --vkamp-only "* ]]; then
  # The same sizes as the vkamp side (attn's --size), PyTorch's backends.
  timeout $((60 * slow)) "${PYTHON:-python3}" "$B/bench/attention_peer.py" --size "${attn[1]}" "${peer_quick[@]}" 2>&1 |
    tee -a "$out/attention-kernels.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || { echo "check-gpu: the PyTorch attention peer failed"; status=1; }
fi

step "issue 53: the blocks' GEMM paths tuned (vkamp-bench quant --tune ${quant[*]})"
timeout $((150 * slow)) "$B/bin/vkamp-bench" quant --tune --max-tune-s 4 "${quant[@]}" 2>&1 | tee "$out/quant-tune.txt"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "check-gpu: the quantized GEMM's sweep failed"; status=1; }
step "issue 53: W in ggml blocks against fp16 on the tuned paths (vkamp-bench quant ${quant[*]})"
timeout $((120 * slow)) "$B/bin/vkamp-bench" quant "${quant[@]}" 2>&1 | tee "$out/quant-gemm.txt"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "check-gpu: the quantized GEMM benchmark failed"; status=1; }
step "issue 53: a Q8_0 and a Q4_K_M GGUF model's forward against llama.cpp's Vulkan backend (${gguf[*]})"
# Exit 3: no llama.cpp in the bundle (or no Python with numpy and yaml):
# said, and not a failure of the GPU.
timeout $((300 * slow)) "$B/bench/gguf_vs_llamacpp.sh" "${gguf[@]}" 2>&1 | tee "$out/gguf-vs-llamacpp.txt"
rc=${PIPESTATUS[0]}
[ "$rc" = 3 ] && echo "check-gpu: skipped (scripts/bundle.sh with VKAMP_BUNDLE_LLAMACPP=1 packs llama.cpp)"
[ "$rc" = 0 ] || [ "$rc" = 3 ] || { echo "check-gpu: the comparison against llama.cpp failed ($rc)"; status=1; }
if [ "$rc" = 0 ]; then  # vkamp-generate's prompt (prefill) on the Q4_K_M file, the same sizes
  timeout $((120 * slow)) "$B/bench/gguf_vs_llamacpp.sh" --vkamp prefill --types q4_k_m "${gguf[@]}" 2>&1 |
    tee "$out/prefill-vs-llamacpp.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || { echo "check-gpu: vkamp-generate's prompt against llama.cpp failed"; status=1; }
fi

step "issue 53: QLoRA training throughput (bench/qlora_rate.sh ${qlora[*]})"
timeout $((240 * slow)) "$B/bench/qlora_rate.sh" "${qlora[@]}" 2>&1 | tee "$out/qlora-rate.txt"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "check-gpu: the QLoRA throughput run failed"; status=1; }

rest=$(left)
step "the rest of the suite (${rest} s left)"
if [ "$rest" -gt 20 ]; then
  timeout "$rest" "$B/run-tests.sh" -x '^shaders_(gemm|attention)_mma_(coopmat|khr) ' 2>&1 | tee "$out/tests.txt"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 124 ] && echo "check-gpu: the suite stopped at the time limit (not a failure of its own)"
  [ "$rc" = 0 ] || [ "$rc" = 124 ] || status=1
else
  echo "check-gpu: no time left for it"
fi
echo "check-gpu: done in $SECONDS s, exit $status; logs in $out"
exit $status
