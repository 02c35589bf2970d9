#!/usr/bin/env bash
# Runs vkamp's tests from an unpacked test bundle (scripts/bundle.sh makes
# it). Needs bash, coreutils, awk and a Vulkan driver; the bundle carries the
# binaries, the Vulkan loader, the validation layer and the data.
#
#   run-tests.sh [-j N] [-c SIZE] [-l] [-x EXCLUDE] [REGEX]
#
#   -j N     run N test processes at once (default: the number of CPUs)
#   -c SIZE  at most SIZE gtest cases per process (default 100)
#   -l       list the selected tests instead of running them
#   -x RE    leave out the tests that RE matches (as REGEX matches)
#   REGEX    extended regex matched against "ENTRY TEST", e.g. 'Shaders/Gemm',
#            '^test_io ' or '^shaders_gemm_tiled_path '
#
# tests.list holds one line per test as ctest runs it: the entry (the test
# binary, or the ctest name of a path variant), the environment it sets, the
# command and the gtest case. Each process runs up to SIZE cases of one entry
# through --gtest_filter. VKAMP_DEVICE picks the device; VKAMP_TEST_TIMEOUT
# (default 1800) bounds each process in seconds. Ends with "N passed, N failed,
# N skipped"; exits 1 if anything failed.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
jobs=$(nproc 2>/dev/null || echo 2) size=100 list=0 exclude=""
while getopts "j:c:lx:h" o; do
  case $o in
    j) jobs=$OPTARG ;; c) size=$OPTARG ;; l) list=1 ;; x) exclude=$OPTARG ;;
    *) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
filter="${1:-}"

# The bundle's binaries find their libraries through their rpath ($ORIGIN);
# the loader finds the bundled validation layer here, and the driver where
# the system keeps it (/usr/share/vulkan/icd.d and the like).
export VK_LAYER_PATH="$B/layers"
# Where the tests find their data and the sample programs: each compile
# definition of a path (VKAMP_GOLDEN_DIR, VKAMP_SAMPLES_DIR, ...) under its own name.
while IFS='=' read -r name path; do export "$name=$B/$path"; done <"$B/data/paths.env"

out="$(mktemp -d "${TMPDIR:-/tmp}/vkamp-tests.XXXXXX")"
mkdir -p "$out/chunks"
export VKAMP_PIPELINE_CACHE="${VKAMP_PIPELINE_CACHE:-$out/pipeline-cache.bin}"

# Split the selected tests into chunks: at most $size cases of one entry each.
# chunks/N.tests holds a chunk's cases; index lines are "N entry env command".
awk -F'\t' -v re="$filter" -v ex="$exclude" -v size="$size" -v dir="$out/chunks" '
  /^#/ || NF < 4 { next }
  re != "" && ($1 " " $4) !~ re { next }
  ex != "" && ($1 " " $4) ~ ex { next }
  $1 != entry || n >= size || $4 == "-" {
    if (f) close(f)
    entry = $1; n = 0; f = dir "/" ++id ".tests"
    print id "\t" $1 "\t" $2 "\t" $3
  }
  { print $4 > f; n++ }' "$B/tests.list" >"$out/index"
total=$(cat "$out"/chunks/*.tests 2>/dev/null | wc -l)
if [ "$list" = 1 ]; then
  while IFS=$'\t' read -r id entry _ _; do sed "s|^|$entry |" "$out/chunks/$id.tests"; done <"$out/index"
  rm -rf "$out"
  exit 0
fi
[ "$total" -gt 0 ] || { echo "run-tests: no test matches '$filter'"; rm -rf "$out"; exit 2; }

echo "vkamp test bundle $(cat "$B/VERSION")"
if ! "$B/bin/vkamp-info" >"$out/vkamp-info.txt" 2>&1; then
  cat "$out/vkamp-info.txt"
  echo "run-tests: vkamp-info failed (no Vulkan driver, or no device for VKAMP_DEVICE): no test ran"
  exit 1
fi
# The device the tests run on: the one vkamp-info marks with *.
awk 'NR == 1 {print} /^\* \[/ {on = 1} /^  \[/ || /^$/ {on = 0} on' "$out/vkamp-info.txt"
chunks=$(wc -l <"$out/index")
echo "running $total tests in $chunks processes, $jobs at a time; logs in $out (removed if all pass)"

# Runs chunk N: writes chunks/N.result ("passed failed skipped") and, to
# chunks/N.failed, the cases that failed or never reported (a crash, a timeout).
run_chunk() {
  local c="$out/chunks/$1" entry=$2 env=$3 t0=$SECONDS rc passed failed skipped
  local -a argv vars=()
  read -r -a argv <<<"$4"
  argv=("$B/bin/${argv[0]}" "${argv[@]:1}")
  argv=("${argv[@]//@B@/$B}")  # @B@ stands for the bundle's directory
  [ "$(cat "$c.tests")" = "-" ] || argv+=("--gtest_filter=$(paste -sd: "$c.tests")")
  [ "$env" = "-" ] || read -r -a vars <<<"$env"
  (cd "$out" && env "${vars[@]//@B@/$B}" timeout "${VKAMP_TEST_TIMEOUT:-1800}" "${argv[@]}") >"$c.log" 2>&1 </dev/null
  rc=$?
  local why="exit status $rc"
  [ $rc != 124 ] || why="timed out after ${VKAMP_TEST_TIMEOUT:-1800} s"
  if [ "$(cat "$c.tests")" = "-" ]; then  # a plain command: its exit status
    passed=$((rc == 0)) failed=$((rc != 0)) skipped=0
    [ $rc = 0 ] || echo "$entry ($why)" >"$c.failed"
  else
    sed -nE 's/^\[ +(OK|FAILED|SKIPPED) +\] ([^ ,]+)(, where .*)? \([0-9]+ ms\)$/\1 \2/p' "$c.log" >"$c.seen"
    passed=$(grep -c '^OK ' "$c.seen")
    skipped=$(grep -c '^SKIPPED ' "$c.seen")
    {
      sed -n "s|^FAILED \(.*\)|$entry \1|p" "$c.seen"
      cut -d' ' -f2 "$c.seen" | grep -vxFf - "$c.tests" | sed "s|^|$entry |; s|\$| (did not finish: $why)|"
    } >"$c.failed"
    failed=$(wc -l <"$c.failed")
    # Every case passed but the process failed: e.g. validation messages at
    # device destruction.
    if [ "$failed" = 0 ] && [ $rc != 0 ]; then
      echo "$entry ($why after every case passed)" >"$c.failed"
      failed=1
    fi
  fi
  echo "$passed $failed $skipped" >"$c.result"
  printf '%4s/%s %-34s %4d passed %3d failed %3d skipped %5ds\n' \
    "$1" "$chunks" "$entry" "$passed" "$failed" "$skipped" $((SECONDS - t0))
}

running=0
while IFS=$'\t' read -r id entry env cmd; do
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
  run_chunk "$id" "$entry" "$env" "$cmd" &
  running=$((running + 1))
done <"$out/index"
wait

# A chunk without a result (the runner itself was killed) counts as one failure.
read -r passed failed skipped < <(for i in $(seq "$chunks"); do cat "$out/chunks/$i.result" 2>/dev/null || echo 0 1 0; done |
                                    awk '{p += $1; f += $2; s += $3} END {print p + 0, f + 0, s + 0}')
if [ "$failed" -gt 0 ]; then
  echo "failed (logs: $out/chunks/N.log):"
  for f in "$out"/chunks/*.failed; do
    [ -s "$f" ] && sed "s|^|  [$(basename "$f" .failed)] |" "$f"
  done
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] || exit 1
rm -rf "$out"
