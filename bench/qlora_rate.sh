#!/usr/bin/env bash
# Training throughput of LoRA over a quantized frozen base (QLoRA): tokens/s
# of vkamp-finetune's steps on a random model of a real shape, its base
# quantized at load (--quantize, ggml's blocks), one run per block type.
# The line to hold against qvac-fabric's published Vulkan LoRA rates
# (tetherto/qvac-rnd-fabric-llm-finetune docs/BENCHMARKS.md: Qwen3-1.7B in
# Q8_0, context 128: 47 tokens/s on an RX 7900 XTX, 30 on an Arc A770, 116 on
# an RTX 4090). Qwen3 has q/k norms vkamp does not read; qwen2.5-1.5b is the
# nearest shape it does (28 layers, vocabulary 151,936).
#   bench/qlora_rate.sh [--shape qwen2.5-1.5b] [--types "q8_0 q4_k"]
#       [--seq-len 128] [--batch 1] [--rank 16] [--steps 20]
# tokens/s = the summary's samples/s x seq-len: the run's steps over its
# wall time, the first step's pipeline builds included (the validation
# before and after is not). Prints each type's line and its run's log tail.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -x "$here/../bin/vkamp-finetune" ]; then  # an unpacked bundle: this script in vkamp-tests/bench/
  finetune="$here/../bin/vkamp-finetune"
else
  source "$here/../scripts/env.sh"
  finetune="$VKAMP_BUILD/samples/vkamp-finetune"
fi
shape=qwen2.5-1.5b types="q8_0 q4_k" seq=128 batch=1 rank=16 steps=20
while [ $# -gt 0 ]; do
  case "$1" in
    --shape) shape="$2"; shift 2 ;;
    --types) types="$2"; shift 2 ;;
    --seq-len) seq="$2"; shift 2 ;;
    --batch) batch="$2"; shift 2 ;;
    --rank) rank="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "qlora_rate.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
  esac
done
for n in "$seq" "$batch" "$rank" "$steps"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "qlora_rate.sh: options take whole numbers from 1, got '$n'" >&2; exit 2; }
done
[ -x "$finetune" ] || { echo "qlora_rate.sh: no $finetune (build it first)" >&2; exit 2; }
log="$(mktemp -d)"
trap 'rm -rf "$log"' EXIT
status=0
for t in $types; do
  if ! "$finetune" --synthetic "$shape" --quantize "$t" --lora-rank "$rank" --seq-len "$seq" --batch "$batch" \
      --max-steps "$steps" --eval-every "$steps" --no-progress >"$log/$t.txt" 2>&1; then
    echo "qlora_rate.sh: the $t run failed:"; tail -5 "$log/$t.txt"; status=1; continue
  fi
  rate=$(sed -n 's/.* \([0-9.]*\) samples\/s$/\1/p' "$log/$t.txt" | tail -1)
  peak=$(sed -n 's/.*every buffer held [0-9.]* now, \([0-9.]*\) at most.*/\1/p' "$log/$t.txt" | tail -1)
  awk -v s="$shape" -v t="$t" -v r="${rate:-0}" -v q="$seq" -v b="$batch" -v k="$rank" -v n="$steps" -v p="${peak:--}" \
    'BEGIN { printf "qlora %s %s: LoRA r %s, %s tokens x batch %s, %s steps: %.2f tokens/s, device memory at most %s MiB\n", s, t, k, q, b, n, r * q, p }'
done
exit "$status"
