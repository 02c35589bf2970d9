#!/usr/bin/env bash
# vkamp against PyTorch CUDA on one NVIDIA GPU, side by side.
#   bench/gpu_vs_torch.sh [options]
# In turns (run i of every column before run i+1 of any), --rounds times:
#   fashion_mlp (b128), lenet5 (b64): samples/s
#   charlm tiny (2L 4H d64 T64 b16), small (4L 4H d128 T128 b32),
#          medium (6L 6H d384 T256 b64, nanoGPT's shakespeare_char),
#          gpt2 (12L 12H d768 T1024 b8, GPT-2 small's shape): tokens/s
#   medium and gpt2 also keep each side's profile in the log (vkamp fp16's
#   --profile: GPU time by op class and its top 10 dispatches; PyTorch's
#   torch.profiler split into the same classes) and print the activation
#   memory of both (vkamp's activations + workspace, torch.cuda.max_memory_allocated)
#   gemm MxNxK in each --forms form: TFLOP/s (vkamp-bench gemm --shape)
#   lora: LoRA r 16 on all seven projections of a random tinyllama-1.1b,
#   seq 512, batch 2 (vkamp-finetune --synthetic; torch_lora.py, a
#   hand-written LoRA with a frozen fp16 base, no peft needed): tokens/s and
#   the memory of both sides (vkamp fp16's held-at-most, max_memory_allocated)
# Columns: vkamp fp16 with dynamic loss scaling, vkamp fp32, [vkamp fp16 with
# VKAMP_COOPMAT=1], and PyTorch (autocast float16 + GradScaler, data on the GPU;
# torch.mm in fp16 for gemm). Ends with the median of the rounds and the ratios.
# Every run's output is kept in the --log directory.
# Options:
#   --bin DIR          vkamp-bench and the samples (default: the bundle's bin/ when
#                      run from an unpacked bundle, else $VKAMP_BUILD/{bench,samples})
#   --python PY        the Python with torch (default: $PYTHON, else python3)
#   --rounds N         default 3
#   --workloads LIST   from mlp,lenet5,tiny,small,medium,gpt2,gemm,lora (default: all)
#   --shapes LIST      gemm shapes MxNxK (default 1024^3, 2048^3, 4096^3, 8192^3)
#   --forms LIST       gemm forms from forward,dx,dw (default forward)
#   --epochs N         mlp, lenet5 (default 2)    --steps N   charlm (default 300)
#   --precisions LIST  vkamp's columns, from fp16,fp32 (default both; fp16 alone
#                      halves the time of a large model's run)
#   --coopmat V        0|1|emulate: VKAMP_COOPMAT=V for every vkamp run; both:
#                      VKAMP_COOPMAT=0, plus fp16 with VKAMP_COOPMAT=1 as a third
#                      column (default: unset, the engine chooses)
#   --device SEL       vkamp's device (as VKAMP_DEVICE)
#   --data DIR         Fashion-MNIST (default: $VKAMP_FASHION_MNIST_DIR, the
#                      bundle's, else /usr/share/datasets/fashion-mnist)
#   --text FILE        charlm's corpus (default: the bundle's copy of the fortunes
#                      text, else the fortunes package's, as charlm reads it)
#   --log DIR          where every run's output goes (default: a new temporary dir)
#   --quick            a check of the script, not a measurement: 1 round, 30 steps
#                      of mlp and lenet5, 10 of charlm tiny, gemm 64x48x40 and 128^3
#   --vkamp-only       no PyTorch side (machines without CUDA)
#   --torch-device D   cuda (default) or cpu: PyTorch in fp32 on the CPU, to check
#                      the script where there is no GPU; not the comparison
# Exits 2 on a bad option, or when PyTorch cannot see a CUDA device.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "gpu_vs_torch.sh: $*" >&2; exit 2; }

bin="" py="${PYTHON:-python3}" rounds=3 workloads=mlp,lenet5,tiny,small,medium,gpt2,gemm,lora
shapes=1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192 forms=forward
epochs=2 steps=300 coopmat="" data="" text="" log="" quick=0 torch_dev=cuda vkamp_only=0 precisions=fp16,fp32
given=" "
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --quick) quick=1; shift; continue ;;
    --vkamp-only) vkamp_only=1; shift; continue ;;
  esac
  [ $# -ge 2 ] || die "$1 needs a value (or unknown option; --help lists them)"
  case "$1" in
    --bin) bin="$2" ;;
    --python) py="$2" ;;
    --rounds) rounds="$2" ;;
    --workloads) workloads="$2" ;;
    --shapes) shapes="$2" ;;
    --forms) forms="$2" ;;
    --epochs) epochs="$2" ;;
    --steps) steps="$2" ;;
    --coopmat) coopmat="$2" ;;
    --precisions) precisions="$2" ;;
    --device) export VKAMP_DEVICE="$2" ;;
    --data) data="$2" ;;
    --text) text="$2" ;;
    --log) log="$2" ;;
    --torch-device) torch_dev="$2" ;;
    *) die "unknown option $1 (--help lists them)" ;;
  esac
  given+="$1 "
  shift 2
done
if [ "$quick" = 1 ]; then
  # What --quick picks, unless given explicitly.
  [[ $given == *" --rounds "* ]] || rounds=1
  [[ $given == *" --workloads "* ]] || workloads=mlp,lenet5,tiny,gemm
  [[ $given == *" --shapes "* ]] || shapes=64x48x40,128x128x128
  [[ $given == *" --steps "* ]] || steps=10
fi
whole() { [[ $2 =~ ^[0-9]+$ && $2 -ge $3 ]] || die "$1 needs a whole number >= $3, got '$2'"; }
whole --rounds "$rounds" 1
whole --epochs "$epochs" 1
whole --steps "$steps" 6  # torch_charlm.py leaves 5 warm-up steps untimed
case "$coopmat" in ""|0|1|emulate|both) ;; *) die "--coopmat is 0, 1, emulate or both, not '$coopmat'" ;; esac
case "$torch_dev" in cuda|cpu) ;; *) die "--torch-device is cuda or cpu, not '$torch_dev'" ;; esac
IFS=, read -ra prec_list <<<"$precisions"
for prec in "${prec_list[@]}"; do
  case "$prec" in fp16|fp32) ;; *) die "--precisions takes fp16 and fp32, not '$prec'" ;; esac
done
IFS=, read -ra wl <<<"$workloads"
for w in "${wl[@]}"; do
  case "$w" in mlp|lenet5|tiny|small|medium|gpt2|gemm|lora) ;;
    *) die "unknown workload '$w' (mlp,lenet5,tiny,small,medium,gpt2,gemm,lora)" ;; esac
done
IFS=, read -ra shape_list <<<"$shapes"
for s in "${shape_list[@]}"; do
  [[ $s =~ ^[0-9]+x[0-9]+x[0-9]+$ ]] || die "--shapes takes MxNxK items, got '$s'"
done
IFS=, read -ra form_list <<<"$forms"
for f in "${form_list[@]}"; do
  case "$f" in forward|dx|dw) ;; *) die "unknown form '$f' (forward,dx,dw)" ;; esac
done
has() { [[ ",$workloads," == *",$1,"* ]]; }

# Where the binaries and data are: an unpacked bundle (this script in
# vkamp-tests/bench/), or a source checkout and its build.
if [ -x "$here/../bin/vkamp-bench" ]; then
  root="$(cd "$here/.." && pwd)"
  bundle=1
  dirs=("$root/bin")
  # The bundle's data, under the names run-tests.sh exports.
  while IFS='=' read -r name path; do export "$name=$root/$path"; done <"$root/data/paths.env"
  [ -n "$text" ] || [ ! -f "$root/data/charlm-corpus.txt" ] || text="$root/data/charlm-corpus.txt"
else
  source "$here/../scripts/env.sh"
  bundle=0
  dirs=("$VKAMP_BUILD/bench" "$VKAMP_BUILD/samples")
fi
[ -z "$bin" ] || dirs=("$bin" "$bin/bench" "$bin/samples")
find_bin() {
  local d
  for d in "${dirs[@]}"; do [ -x "$d/$1" ] && { echo "$d/$1"; return; }; done
  die "no $1 in ${dirs[*]} (build it, or give --bin DIR)"
}
vkamp_info=$(find_bin vkamp-info)
need=()
has mlp && need+=(fashion_mlp)
has lenet5 && need+=(lenet5)
{ has tiny || has small || has medium || has gpt2; } && need+=(charlm)
has gemm && need+=(vkamp-bench)
has lora && need+=(vkamp-finetune)
declare -A exe
for b in "${need[@]}"; do exe[$b]=$(find_bin "$b"); done
if has mlp || has lenet5; then
  data="${data:-${VKAMP_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}}"
  ls "$data"/train-images-idx3-ubyte* >/dev/null 2>&1 || die "no Fashion-MNIST in $data (give --data DIR)"
fi
if { has tiny || has small || has medium || has gpt2; } && [ -z "$text" ]; then
  [ -d /usr/share/games/fortunes ] || die "charlm needs a corpus: give --text FILE (or install fortunes)"
fi
[ -z "$text" ] || [ -f "$text" ] || die "--text $text: no such file"
text_arg=(); [ -z "$text" ] || text_arg=(--text "$text")

# The PyTorch side: torch (and numpy, which the GPT reference uses) must
# import, and on CUDA see a device; peer_info.py --cuda prints it.
if [ "$vkamp_only" = 0 ]; then
  command -v "$py" >/dev/null || die "no $py (give --python PY, or --vkamp-only)"
  "$py" -c 'import torch, numpy' 2>/dev/null ||
    die "$py cannot import torch and numpy (pip install torch numpy; --python PY picks another Python)"
  if [ "$torch_dev" = cuda ]; then
    torch_info=$("$py" "$here/peer_info.py" --cuda) || die "no CUDA GPU for PyTorch (--vkamp-only runs vkamp alone)"
  else
    torch_info=$("$py" "$here/peer_info.py") || die "$here/peer_info.py failed"
    torch_info=${torch_info%%$'\n'*}  # the BLAS line
  fi
fi

log="${log:-$(mktemp -d "${TMPDIR:-/tmp}/gpu-vs-torch.XXXXXX")}"
mkdir -p "$log"
results="$log/results.tsv"
: >"$results"

# The vkamp columns: name, then the VKAMP_COOPMAT it runs under ("" unset).
# fp16 first, then fp32, whatever the order asked (the table's fp16/fp32).
cols=() col_cm=()
for prec in fp16 fp32; do
  [[ ",$precisions," == *",$prec,"* ]] && { cols+=("$prec"); col_cm+=("$coopmat"); }
done
[ "${#cols[@]}" -gt 0 ] || die "--precisions needs fp16, fp32 or both"
if [ "$coopmat" = both ]; then
  for i in "${!col_cm[@]}"; do col_cm[i]=0; done
  cols+=(fp16-coopmat1); col_cm+=(1)
fi
torch_col="torch-$torch_dev"

echo "== devices"
"$vkamp_info" 2>&1 | grep -E '^\* \[|^ +driver |cooperative matrix|tensor cores|GEMM builds|precision path' || true
[ "$vkamp_only" = 1 ] || echo "$torch_info"
if [ "$bundle" = 1 ]; then where="the bundle in $root"; else where="the build in $VKAMP_BUILD"; fi
echo "vkamp    binaries from ${bin:-$where}; VKAMP_COOPMAT ${coopmat:-unset (the engine chooses)}"
echo "log      $log"
echo

# show VALUE UNIT: TFLOP/s to 4 digits, rates whole.
show() { awk -v v="$1" -v u="$2" 'BEGIN { print v == "-" ? v : u == "TFLOP/s" ? sprintf("%.4g", v) : sprintf("%.0f", v) }'; }
# record ROUND WORKLOAD COLUMN VALUE UNIT: one result, printed as it comes.
record() {
  printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$results"
  printf '  round %s  %-26s %-20s %12s %s\n' "$1" "$2" "$3" "$(show "$4" "$5")" "$5"
}
# run LOGNAME COMMAND...: the command's output into the log; fails quietly.
run() {
  local f="$log/$1"; shift
  echo "\$ $*" | sed 's/^\$ vkamp_env  /$ /; s/^\$ vkamp_env \([^ ]*\) /$ VKAMP_COOPMAT=\1 /' >"$f"
  "$@" >>"$f" 2>&1 || echo "gpu_vs_torch.sh: failed ($?), see $f" >&2
  cat "$f"
}
source "$here/turns.sh"
vkamp_env() { local cm=$1; shift; if [ -n "$cm" ]; then env VKAMP_COOPMAT="$cm" "$@"; else "$@"; fi; }
precision() { case "$1" in fp32) echo "--precision fp32 --loss-scale none" ;; *) echo "--precision fp16" ;; esac; }

# The samples against torch_peer.py: the same net, batch, SGD and schedule.
mnist_turn() {  # ROUND MODEL SAMPLE BATCH SCHEDULE
  local r=$1 model=$2 sample=$3 batch=$4 sched=$5 i v
  local common=(--epochs "$epochs" --batch "$batch" --lr 0.05 --momentum 0.9 --lr-schedule "$sched")
  [ "$quick" = 0 ] || common+=(--max-steps 30)
  for i in "${!cols[@]}"; do
    # shellcheck disable=SC2046  # precision's words are flags
    v=$(run "r$r-$sample-${cols[i]}.log" vkamp_env "${col_cm[i]}" "${exe[$sample]}" "${common[@]}" \
        $(precision "${cols[i]}") --data "$data" --data-on-gpu always --no-progress | rate)
    record "$r" "$sample b$batch" "vkamp-${cols[i]}" "${v:--}" samples/s
  done
  [ "$vkamp_only" = 1 ] && return
  v=$(run "r$r-$sample-torch.log" "$py" "$here/torch_peer.py" --model "$model" --device "$torch_dev" \
      "${common[@]}" --data "$data" | rate)
  record "$r" "$sample b$batch" "$torch_col" "${v:--}" samples/s
}

# charlm against torch_charlm.py: layers heads channels block batch, given
# to both explicitly so that this table is the one definition of the sizes.
declare -A gpt=([tiny]="2 4 64 64 16" [small]="4 4 128 128 32" [medium]="6 6 384 256 64"
               [gpt2]="12 12 768 1024 8")
# The sizes whose runs keep a profile (vkamp fp16 and PyTorch) and memory.
profiled() { [ "$1" = medium ] || [ "$1" = gpt2 ]; }
charlm_turn() {  # ROUND SIZE
  local r=$1 size=$2 i v L H D T B prof
  read -r L H D T B <<<"${gpt[$size]}"
  local name="charlm $size"
  for i in "${!cols[@]}"; do
    prof=(); profiled "$size" && [ "${cols[i]}" = fp16 ] && prof=(--profile)
    # shellcheck disable=SC2046
    v=$(run "r$r-charlm-$size-${cols[i]}.log" vkamp_env "${col_cm[i]}" "${exe[charlm]}" --n-layer "$L" \
        --n-head "$H" --n-embd "$D" --block-size "$T" --batch "$B" --max-steps "$steps" --eval-every "$steps" \
        --generate 0 "${text_arg[@]}" $(precision "${cols[i]}") "${prof[@]}" --no-progress | rate)
    # The summary counts windows of T characters.
    record "$r" "$name" "vkamp-${cols[i]}" "$(awk -v s="$v" -v t="$T" 'BEGIN { print s == "" ? "-" : s * t }')" tokens/s
  done
  [ "$vkamp_only" = 1 ] || {
    prof=(); profiled "$size" && prof=(--profile 10)
    v=$(run "r$r-charlm-$size-torch.log" "$py" "$here/torch_charlm.py" --device "$torch_dev" --n-layer "$L" \
        --n-head "$H" --n-embd "$D" --block-size "$T" --batch "$B" --steps "$steps" --eval-every "$steps" \
        "${text_arg[@]}" "${prof[@]}" | sed -n 's/.*tokens_per_s=\([0-9.]*\).*/\1/p')
    record "$r" "$name" "$torch_col" "${v:--}" tokens/s
  }
  profiled "$size" && memory_line "$r" "$size"
  return 0
}
# The memory of both sides from the logs of one round: vkamp fp16's
# activations + workspace (its summary's device memory line) and every
# buffer it held at most (the same line's end: parameters, optimizer state
# and scratch too, as PyTorch counts), and PyTorch's max_memory_allocated over
# a step and the part above what it holds between steps.
memory_line() {  # ROUND SIZE
  local vk="$log/r$1-charlm-$2-fp16.log" th="$log/r$1-charlm-$2-torch.log" a="-" h="-" t="-"
  [ -f "$vk" ] && a=$(sed -n 's/.*activations \([0-9.]*\) .*workspace \([0-9.]*\),.*/\1 + \2 MiB/p' "$vk" | head -1)
  [ -f "$vk" ] && h=$(sed -n 's/.*device memory (MiB):.*every buffer held [0-9.]* now, \([0-9.]*\) at most.*/\1 MiB/p' "$vk" | head -1)
  [ -f "$th" ] && t=$(sed -n 's/^memory *max_memory_allocated \([0-9.]*\) MiB.*; \([0-9.]*\) MiB above.*/\1 MiB (\2 above what it holds between steps)/p' "$th")
  printf '  round %s  charlm %s memory: vkamp-fp16 activations + workspace %s, held at most %s; %s max_memory_allocated %s\n' \
    "$1" "$2" "${a:--}" "${h:--}" "$torch_col" "${t:--}"
}

# vkamp-bench's table rows: "FORM ... M N K FORMAT MS GFLOP/s ...", FORM's
# first word forward, dX or dW; skipped rows have no time.
gemm_rows() {
  awk '{ for (i = 5; i <= NF; i++) if ($i ~ /^fp(16|32)$/ && $(i - 1) ~ /^[0-9]+$/ && $(i + 1) ~ /^[0-9.]+$/) {
           f = $1 == "forward" ? "forward" : $1 == "dX" ? "dx" : "dw"
           print f, $(i - 3) "x" $(i - 2) "x" $(i - 1), $i, $(i + 2) / 1000 } }'
}
gemm_turn() {  # ROUND SHAPE
  local r=$1 s=$2 m n k f col tf ms out
  IFS=x read -r m n k <<<"$s"
  # fp16 and fp32 take turns inside one vkamp-bench run; a coopmat column is a second run.
  out=$(run "r$r-gemm-$s-vkamp.log" vkamp_env "${col_cm[0]}" "${exe[vkamp-bench]}" gemm --shape "$s" \
        --forms "$forms" --formats fp32,fp16 | gemm_rows)
  if [ "$coopmat" = both ]; then
    out+=$'\n'$(run "r$r-gemm-$s-vkamp-coopmat1.log" vkamp_env 1 "${exe[vkamp-bench]}" gemm --shape "$s" \
                --forms "$forms" --formats fp16 | gemm_rows | sed 's/ fp16 / fp16-coopmat1 /')
  fi
  for f in "${form_list[@]}"; do
    for col in "${cols[@]}"; do
      tf=$(awk -v f="$f" -v c="$col" '$1 == f && $3 == c { print $4 }' <<<"$out")
      record "$r" "gemm $s $f" "vkamp-$col" "${tf:--}" TFLOP/s
    done
  done
  [ "$vkamp_only" = 1 ] && return
  # cuBLAS in fp16 on CUDA; on the CPU fp32 (Debian's torch has no fp16 CPU GEMM).
  local dtype=fp16; [ "$torch_dev" = cuda ] || dtype=fp32
  for f in "${form_list[@]}"; do
    # The form's layer: forward m,n,k = batch,out,in; dX batch,in,out; dW out,in,batch.
    local layer
    case "$f" in forward) layer=(--batch "$m" --out "$n" --in "$k") ;;
                 dx) layer=(--batch "$m" --in "$n" --out "$k") ;;
                 dw) layer=(--out "$m" --in "$n" --batch "$k") ;; esac
    ms=$(run "r$r-gemm-$s-$f-torch.log" "$py" "$here/gemm_peer.py" --device "$torch_dev" --dtype "$dtype" \
         --form "$f" "${layer[@]}" | sed -n 's/^ms=\([0-9.]*\).*/\1/p')
    tf=$(awk -v ms="$ms" -v m="$m" -v n="$n" -v k="$k" 'BEGIN { print ms == "" ? "-" : 2 * m * n * k / (ms * 1e9) }')
    record "$r" "gemm $s $f" "$torch_col" "$tf" TFLOP/s
  done
}

# LoRA on a random tinyllama-1.1b (llama-tiny with --quick): vkamp-finetune
# --synthetic against torch_lora.py, the same shape, rank, batch and steps.
lora_turn() {  # ROUND
  local r=$1 i v shape=tinyllama-1.1b T=512 B=2 n=$steps
  [ "$quick" = 0 ] || { shape=llama-tiny; T=64; }
  [ "$n" -le 30 ] || n=30  # a 1.1B step is long; 30 steps time it well
  for i in "${!cols[@]}"; do
    # shellcheck disable=SC2046
    v=$(run "r$r-lora-${cols[i]}.log" vkamp_env "${col_cm[i]}" "${exe[vkamp-finetune]}" --synthetic "$shape" \
        --lora-rank 16 --seq-len "$T" --batch "$B" --max-steps "$n" --eval-every "$n" $(precision "${cols[i]}") \
        --no-progress | rate)
    record "$r" "lora $shape" "vkamp-${cols[i]}" "$(awk -v s="$v" -v t="$T" 'BEGIN { print s == "" ? "-" : s * t }')" tokens/s
  done
  [ "$vkamp_only" = 1 ] || {
    v=$(run "r$r-lora-torch.log" "$py" "$here/torch_lora.py" --device "$torch_dev" --shape "$shape" --seq-len "$T" \
        --batch "$B" --steps "$n" | sed -n 's/.*tokens_per_s=\([0-9.]*\).*/\1/p')
    record "$r" "lora $shape" "$torch_col" "${v:--}" tokens/s
  }
  local vk="$log/r$r-lora-fp16.log" th="$log/r$r-lora-torch.log" h="-" t="-"
  [ -f "$vk" ] && h=$(sed -n 's/.*device memory (MiB):.*every buffer held [0-9.]* now, \([0-9.]*\) at most.*/\1 MiB/p' "$vk" | head -1)
  [ -f "$th" ] && t=$(sed -n 's/^memory max_memory_allocated \([0-9.]*\) MiB.*/\1 MiB/p' "$th")
  printf '  round %s  lora memory: vkamp-fp16 held at most %s; %s max_memory_allocated %s\n' "$r" "${h:--}" "$torch_col" "${t:--}"
}

for r in $(seq "$rounds"); do
  echo "== round $r of $rounds"
  has mlp && mnist_turn "$r" mlp fashion_mlp 128 constant
  has lenet5 && mnist_turn "$r" lenet5 lenet5 64 cosine
  for size in tiny small medium gpt2; do has "$size" && charlm_turn "$r" "$size"; done
  if has gemm; then for s in "${shape_list[@]}"; do gemm_turn "$r" "$s"; done; fi
  has lora && lora_turn "$r"
done

# The median of the rounds per workload and column, then each vkamp
# column over PyTorch and fp16 over fp32 (>1: the first is faster).
echo
echo "== median of $rounds round(s); ratios: vkamp column / $torch_col, and fp16 / fp32"
awk -F'\t' -v torch="$torch_col" -v ncols="${#cols[@]}" -v colnames="${cols[*]}" '
  function show(v, u) { return v == "" ? "-" : u == "TFLOP/s" ? sprintf("%.4g", v) : sprintf("%.0f", v) }
  function median(key,   n, i, j, t, v) {
    n = split(vals[key], v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n == 0 ? "" : n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  !($2 in seen) { seen[$2] = 1; order[++nw] = $2; unit[$2] = $5 }
  $4 != "-" { vals[$2 SUBSEP $3] = vals[$2 SUBSEP $3] " " $4 }
  END {
    split(colnames, c, " ")
    for (i = 1; i <= ncols; i++) col[c[i]] = i
    printf "%-26s %-10s", "workload", "unit"
    for (i = 1; i <= ncols; i++) printf " %14s", "vkamp-" c[i]
    printf " %14s", torch
    for (i = 1; i <= ncols; i++) printf " %14s", c[i] "/torch"
    printf " %10s\n", "fp16/fp32"
    for (w = 1; w <= nw; w++) {
      k = order[w]
      printf "%-26s %-10s", k, unit[k]
      for (i = 1; i <= ncols; i++) { m[i] = median(k SUBSEP "vkamp-" c[i]); printf " %14s", show(m[i], unit[k]) }
      p = median(k SUBSEP torch)
      printf " %14s", show(p, unit[k])
      for (i = 1; i <= ncols; i++) printf " %14s", (m[i] == "" || p == "" || p == 0) ? "-" : sprintf("%.3fx", m[i] / p)
      f16 = col["fp16"] ? m[col["fp16"]] : ""; f32 = col["fp32"] ? m[col["fp32"]] : ""
      printf " %10s\n", (f16 == "" || f32 == "" || f32 == 0) ? "-" : sprintf("%.2fx", f16 / f32)
    }
  }' "$results"
echo
echo "every run's output: $log (results.tsv: round, workload, column, value, unit)"
