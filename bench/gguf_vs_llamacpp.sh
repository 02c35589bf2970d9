#!/usr/bin/env bash
# The forward pass (prompt processing, tokens/s) of the same Q8_0 and Q4_K_M
# GGUF model in vkamp and in llama.cpp's Vulkan backend, in turns in one run
# (bench/NOTES.md). The model is random and Llama-shaped,
# written by llama.cpp's gguf-py (bench/gguf_bench_model.py, vocabulary of
# llama.cpp's ggml-vocab-llama-spm.gguf) and quantized by llama.cpp's own
# llama_model_quantize, into a temporary folder removed at the end.
#   bench/gguf_vs_llamacpp.sh [--vkamp forward|prefill] [--tokens 256] [--batch 1]
#       [--runs 3] [--rounds 2] [--hidden 1024] [--layers 4] [--heads 16]
#       [--ffn 2816] [--types "q8_0 q4_k_m"]  (types: f16 q8_0 q4_0 q4_k_m ...)
# vkamp (build it first): --vkamp forward (the default), gguf-forward-bench,
# the logits and the loss at every position in fp16, the file's blocks kept
# on the device; --vkamp prefill, llama-prefill-bench, vkamp-generate's
# prompt processing (fp16 weights, the last position's logits; batch 1,
# held against llama.cpp's last-position timing alone). llama.cpp:
# bench/llamacpp_pp.c built here with gcc against llama.cpp's headers
# ($LLAMA_CPP, default /work/llamacpp/llama.cpp, which gives gguf-py and the
# vocabulary too) and node-llama-cpp's prebuilt Vulkan libraries
# ($LLAMA_LIBS), or already built ($LLAMA_TOOL; an unpacked test bundle's
# llamacpp/ holds all three where scripts/bundle.sh found them), every layer
# offloaded, device $GGML_VK_VISIBLE_DEVICES (default 0); timed with logits at every position
# (what a validation loss reads) and at the last one (llama-bench's pp),
# pass by pass in turns. Each program loads the model once a round, warms up
# (pipelines), then times --runs passes; the two take turns round by round,
# the first to go alternating. Prints each pass, then each side's median
# tokens/s and the ratio. Exit 3 where llama.cpp or its tools are absent.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -x "$here/../bin/gguf-forward-bench" ]; then  # an unpacked bundle: this script in vkamp-tests/bench/
  root="$(cd "$here/.." && pwd)"
  vkamp_bin="$root/bin"
  LLAMA_CPP="${LLAMA_CPP:-$root/llamacpp}" LLAMA_LIBS="${LLAMA_LIBS:-$root/llamacpp/lib}"
  LLAMA_TOOL="${LLAMA_TOOL:-$root/llamacpp/llamacpp_pp}"
  # llama.cpp's Vulkan library finds the bundle's Vulkan loader where the machine has none.
  export LD_LIBRARY_PATH="$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  source "$here/../scripts/env.sh"
  vkamp_bin="$VKAMP_BUILD/bench"
fi
what=forward tokens=256 batch=1 runs=3 rounds=2 hidden=1024 layers=4 heads=16 ffn=2816 types="q8_0 q4_k_m"
while [ $# -gt 0 ]; do
  case "$1" in
    --vkamp) what="$2"; shift 2 ;;
    --tokens) tokens="$2"; shift 2 ;;
    --batch) batch="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --hidden) hidden="$2"; shift 2 ;;
    --layers) layers="$2"; shift 2 ;;
    --heads) heads="$2"; shift 2 ;;
    --ffn) ffn="$2"; shift 2 ;;
    --types) types="$2"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gguf_vs_llamacpp.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
  esac
done
for n in "$tokens" "$batch" "$runs" "$rounds" "$hidden" "$layers" "$heads" "$ffn"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "gguf_vs_llamacpp.sh: options take whole numbers from 1, got '$n'" >&2; exit 2; }
done
case "$what" in
  forward) vkamp_bin="$vkamp_bin/gguf-forward-bench" ;;
  prefill) vkamp_bin="$vkamp_bin/llama-prefill-bench"
           [ "$batch" = 1 ] || { echo "gguf_vs_llamacpp.sh: --vkamp prefill takes --batch 1 (one prompt)" >&2; exit 2; } ;;
  *) echo "gguf_vs_llamacpp.sh: --vkamp takes forward or prefill, got '$what'" >&2; exit 2 ;;
esac
declare -A ftype=([f16]=1 [q8_0]=7 [q4_0]=2 [q4_k_m]=15 [q4_k_s]=14 [q5_k_m]=17 [q6_k]=18)
for t in $types; do
  [ -n "${ftype[$t]:-}" ] || { echo "gguf_vs_llamacpp.sh: --types takes f16 q8_0 q4_0 q4_k_m q4_k_s q5_k_m q6_k, got '$t'" >&2; exit 2; }
done

LLAMA_CPP="${LLAMA_CPP:-/work/llamacpp/llama.cpp}"
LLAMA_LIBS="${LLAMA_LIBS:-/work/llamacpp/node_modules/@node-llama-cpp/linux-x64-vulkan/bins/linux-x64-vulkan}"
LLAMA_TOOL="${LLAMA_TOOL:-}"
export GGML_VK_VISIBLE_DEVICES="${GGML_VK_VISIBLE_DEVICES:-0}"
PY="${PYTHON:-/usr/bin/python3}"
[ -x "$PY" ] || PY=python3
absent() { echo "gguf_vs_llamacpp.sh: $1: no comparison against llama.cpp here" >&2; exit 3; }
[ -x "$vkamp_bin" ] || { echo "gguf_vs_llamacpp.sh: build $(basename "$vkamp_bin") first ($vkamp_bin)" >&2; exit 2; }
[ -d "$LLAMA_CPP/gguf-py" ] || absent "no llama.cpp (its gguf-py) at $LLAMA_CPP (LLAMA_CPP)"
[ -f "$LLAMA_LIBS/libggml-vulkan.so" ] || absent "no llama.cpp Vulkan libraries at $LLAMA_LIBS (LLAMA_LIBS)"
"$PY" -c "import sys; sys.path.insert(0, sys.argv[1]); import gguf" "$LLAMA_CPP/gguf-py" 2>/dev/null ||
  absent "$PY cannot import llama.cpp's gguf-py (it needs numpy and yaml)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gguf-vs-llamacpp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ -z "$LLAMA_TOOL" ]; then
  [ -f "$LLAMA_CPP/include/llama.h" ] || absent "no llama.cpp headers at $LLAMA_CPP/include (LLAMA_CPP), no LLAMA_TOOL"
  command -v gcc >/dev/null || absent "no gcc to build bench/llamacpp_pp.c, no LLAMA_TOOL"
  LLAMA_TOOL="$tmp/llamacpp_pp"
  "$here/llamacpp_pp_build.sh" "$LLAMA_CPP" "$LLAMA_LIBS" "$LLAMA_TOOL" "$LLAMA_LIBS"
fi
[ -x "$LLAMA_TOOL" ] || absent "no llamacpp_pp at $LLAMA_TOOL (LLAMA_TOOL)"
"$PY" "$here/gguf_bench_model.py" "$tmp/f16.gguf" --hidden "$hidden" --layers "$layers" --heads "$heads" \
  --kv-heads $((heads < 4 ? heads : 4)) --ffn "$ffn" --llama-cpp "$LLAMA_CPP"
for t in $types; do
  [ "$t" != f16 ] || continue
  "$LLAMA_TOOL" "$LLAMA_LIBS" quantize "$tmp/f16.gguf" "$tmp/$t.gguf" "${ftype[$t]}" > "$tmp/quantize.log" 2>&1 ||
    { tail -5 "$tmp/quantize.log" >&2; exit 1; }
  echo "$t: $(grep -o 'quant size *= *[0-9.]* MiB ([0-9.]* BPW)' "$tmp/quantize.log"); $(grep -o 'converting to [a-zA-Z0-9_]*' \
    "$tmp/quantize.log" | sort | uniq -c | awk '{ printf "%s%d %s", (NR > 1 ? ", " : ""), $1, $4 }') tensors"
done
[[ " $types " = *" f16 "* ]] || rm -f "$tmp/f16.gguf"

source "$here/turns.sh"
n=$((tokens * batch))
echo "$what over $batch x $tokens random tokens, $runs timed passes a program a round, $rounds rounds in turns"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
vk_run() {  # TYPE ROUND: vkamp's pass times (seconds)
  if [ "$what" = forward ]; then set -- "$tmp/$1.gguf" "$tokens" "$batch" "$runs" "$2"
  else set -- "$tmp/$1.gguf" "$tokens" "$runs" "$2"; fi
  "$vkamp_bin" "$@" > "$tmp/vk.out" 2> "$tmp/vk.err" ||
    { cat "$tmp/vk.err" >&2; exit 1; }
  grep -m1 '^device' "$tmp/vk.out" | sed 's/^/  vkamp    /' >> "$tmp/devices"
  awk '/^pass/ { print $2 }' "$tmp/vk.out"
}
ll_logits=2  # every position and the last, in turns
[ "$what" = forward ] || ll_logits=0
ll_run() {  # TYPE ROUND: llama.cpp's pass times, "SECONDS OUTPUTS"
  "$LLAMA_TOOL" "$LLAMA_LIBS" pp "$tmp/$1.gguf" "$tokens" "$batch" "$runs" "$ll_logits" "$2" > "$tmp/ll.out" 2> "$tmp/ll.err" ||
    { tail -20 "$tmp/ll.err" >&2; exit 1; }
  grep '^device' "$tmp/ll.out" | sed 's/^/  llama.cpp /' >> "$tmp/devices"
  grep -o 'offloaded [0-9]*/[0-9]* layers to GPU' "$tmp/ll.err" | head -1 | sed 's/^/  llama.cpp /' >> "$tmp/devices"
  awk '/^pass/ { print $2, $3 }' "$tmp/ll.out"
}
rate() { awk -v n="$n" '{ print n / $1 }' | median; }  # tokens/s of the median pass
declare -A vk ll_all ll_last
for r in $(seq "$rounds"); do
  for t in $types; do
    order="vk ll"
    [ $((r % 2)) = 0 ] && order="ll vk"
    for side in $order; do
      before=$(head -1 /proc/stat)
      if [ "$side" = vk ]; then
        times=$(vk_run "$t" "$r")
        vk[$t]+="$times"$'\n'
        echo "round $r $t vkamp:     passes $(echo $times) s (steal $(steal "$before" "$(head -1 /proc/stat)"))"
      else
        times=$(ll_run "$t" "$r")
        ll_all[$t]+="$(echo "$times" | awk -v n="$n" '$2 == n { print $1 }')"$'\n'
        ll_last[$t]+="$(echo "$times" | awk -v n="$n" '$2 != n { print $1 }')"$'\n'
        echo "round $r $t llama.cpp: passes $(echo "$times" | awk -v n="$n" '{ printf "%s s (%s), ", $1, ($2 == n ? "all logits" : "last logit") }')" \
          "(steal $(steal "$before" "$(head -1 /proc/stat)"))"
      fi
    done
  done
done
sort -u "$tmp/devices"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print a / b }'; }
if [ "$what" = forward ]; then
  printf '%-8s %14s %24s %22s %12s %12s\n' type "vkamp tok/s" "llama.cpp all logits" "llama.cpp last logit" "vkamp/all" "vkamp/last"
else
  printf '%-8s %22s %22s %12s\n' type "vkamp prefill tok/s" "llama.cpp last logit" "vkamp/last"
fi
for t in $types; do
  a=$(echo "${vk[$t]}" | grep . | rate) c=$(echo "${ll_last[$t]}" | grep . | rate)
  if [ "$what" = forward ]; then
    b=$(echo "${ll_all[$t]}" | grep . | rate)
    printf '%-8s %14.2f %24.2f %22.2f %11.2fx %11.2fx\n' "$t" "$a" "$b" "$c" "$(ratio "$a" "$b")" "$(ratio "$a" "$c")"
  else
    printf '%-8s %22.2f %22.2f %11.2fx\n' "$t" "$a" "$c" "$(ratio "$a" "$c")"
  fi
done
echo "tokens/s: $n tokens over the median pass; above 1x vkamp is the faster"
