#!/usr/bin/env bash
# Fuzzes the safetensors reader and the PyTorch-layout import with clang's
# libFuzzer, ASan and UBSan: scripts/fuzz.sh [SECONDS] (default 60).
# New inputs that reach new code go into a scratch corpus; a crash leaves
# crash-* in build/fuzz/ (add it to tests/fuzz/corpus/safetensors/ once
# fixed, so the replay test keeps it fixed). Needs clang-14 and
# libfuzzer-14-dev (installed here on demand, not by CI).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
"$VKAMP_ROOT/scripts/setup.sh" clang-14 libfuzzer-14-dev libclang-rt-14-dev nlohmann-json3-dev
seconds="${1:-60}"
out="$VKAMP_BUILD/fuzz"
mkdir -p "$out/corpus"
src="$VKAMP_ROOT/engine/src"
clang++-14 -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I "$VKAMP_ROOT/engine/include" \
  "$VKAMP_ROOT/tests/fuzz/fuzz_safetensors.cpp" "$src/io/safetensors.cpp" "$src/float_formats.cpp" \
  "$src/train/torch_layout.cpp" "$src/train/param_layout.cpp" "$src/train/model_spec.cpp" "$src/ops/activation_names.cpp" \
  -o "$out/fuzz_safetensors"
cd "$out"
./fuzz_safetensors -max_total_time="$seconds" -max_len=4096 corpus "$VKAMP_ROOT/tests/fuzz/corpus/safetensors"
