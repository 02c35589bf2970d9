#!/usr/bin/env bash
# Fuzzes one reader with clang's libFuzzer, ASan and UBSan:
#   scripts/fuzz.sh TARGET [SECONDS]   fuzz for SECONDS (default 60)
#   scripts/fuzz.sh TARGET --runs N [SEED]
#                                      N inputs from a fixed seed (default 1)
#                                      and the committed corpus only (the
#                                      ctest label `fuzz` runs this way, N
#                                      sized to about 15 s), stopped at 60 s
#                                      on a machine loaded far past that
#   scripts/fuzz.sh TARGET --build     only build (or bring up to date) the
#                                      binary: ctest's fuzz_TARGET_build, so
#                                      that fuzz_TARGET's time is the runs
# Targets: safetensors idx csv npy checkpoint (see the table below).
# Each target is tests/fuzz/fuzz_TARGET.cpp plus the engine sources it
# needs, built here outside CMake (rebuilt when a source is newer), with
# its seed corpus in tests/fuzz/corpus/TARGET/. In the timed mode inputs
# that reach new code go into build/fuzz/corpus-TARGET/; a crash leaves
# build/fuzz/TARGET-crash-* (add it to the committed corpus once fixed, so
# the replay test keeps it fixed). Exit status non-zero on any crash.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

usage="usage: scripts/fuzz.sh TARGET [SECONDS | --runs N [SEED] | --build]"
target="${1:?$usage}"
shift
runs=""
seconds=60
build_only=0
if [ "${1:-}" = "--build" ]; then
  build_only=1
elif [ "${1:-}" = "--runs" ]; then
  runs="${2:?$usage}"
  seed="${3:-1}"
elif [ -n "${1:-}" ]; then
  seconds="$1"
fi

# TARGET -> the engine sources (under engine/src) and the flags and libraries it builds with.
case "$target" in
  # The reader only: the PyTorch-layout import needs the graph ops and so the
  # GPU kernels (see tests/fuzz/fuzz_safetensors.cpp); the replay test runs it.
  safetensors) sources=(io/safetensors.cpp float_formats.cpp); extra=(-DVKAMP_FUZZ_READER_ONLY) ;;
  idx)         sources=(data/idx.cpp); extra=(-lz) ;;
  csv)         sources=(data/csv.cpp data/class_ids.cpp data/file_bytes.cpp); extra=(-lz) ;;
  npy)         sources=(data/npy.cpp data/npz.cpp data/labeled_arrays.cpp data/class_ids.cpp data/file_bytes.cpp
                        float_formats.cpp); extra=(-lzip -lz) ;;
  checkpoint)  sources=(train/checkpoint_file.cpp); extra=(-lz) ;;
  config)      sources=(config/settings_file.cpp config/model_zoo_layout.cpp config/model_zoo_args.cpp config/train_config.cpp
                        config/training_settings.cpp config/setting_values.cpp config/setting_suggestions.cpp
                        amp_level.cpp float_formats.cpp); extra=(-lyaml-cpp) ;;
  *) echo "fuzz.sh: unknown target '$target'; targets: safetensors idx csv npy checkpoint config" >&2; exit 2 ;;
esac

"$VKAMP_ROOT/scripts/setup.sh" >/dev/null  # clang-14, libFuzzer, the compiler runtime
out="$VKAMP_BUILD/fuzz"
mkdir -p "$out"
binary="$out/fuzz_$target"
harness="$VKAMP_ROOT/tests/fuzz/fuzz_$target.cpp"
if [ ! -x "$binary" ] || [ "$0" -nt "$binary" ] ||
   [ -n "$(find "$VKAMP_ROOT/engine" "$harness" -newer "$binary" -name '*.[ch]pp' -print -quit)" ]; then
  echo "fuzz.sh: building $binary"
  clang++-14 -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I "$VKAMP_ROOT/engine/include" "$harness" "${sources[@]/#/$VKAMP_ROOT/engine/src/}" "${extra[@]}" \
    -o "$binary.tmp"
  mv "$binary.tmp" "$binary"
fi
[ "$build_only" = 0 ] || exit 0

seeds="$VKAMP_ROOT/tests/fuzz/corpus/$target"
cd "$out"
if [ -n "$runs" ]; then
  # A fresh scratch corpus and a fixed seed: the same inputs every time, in
  # the same order; the time cap only cuts the run short under a load that
  # slows it 4-fold (ctest's limit is 120 s).
  scratch="$out/runs-$target-seed$seed"
  rm -rf "$scratch"
  mkdir -p "$scratch"
  exec "$binary" -runs="$runs" -max_total_time=60 -seed="$seed" -max_len=4096 -artifact_prefix="$out/$target-" "$scratch" "$seeds"
fi
mkdir -p "$out/corpus-$target"
exec "$binary" -max_total_time="$seconds" -max_len=4096 -artifact_prefix="$out/$target-" "$out/corpus-$target" "$seeds"
