#!/usr/bin/env bash
# Builds bench/llamacpp_pp.c against llama.cpp's headers and prebuilt
# libraries (bench/gguf_vs_llamacpp.sh, and scripts/bundle.sh for a bundle
# that carries llama.cpp):
#   bench/llamacpp_pp_build.sh LLAMA_CPP LIBS OUT RPATH
# LLAMA_CPP: llama.cpp's source (include/, ggml/include/); LIBS: the folder of
# libllama.*.so, libggml.*.so and libggml-base.so; RPATH: where OUT looks for
# them when it runs (LIBS, or '$ORIGIN/lib' in a bundle).
set -euo pipefail
[ $# = 4 ] || { echo "usage: llamacpp_pp_build.sh LLAMA_CPP LIBS OUT RPATH" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
libllama=$(ls "$2"/libllama.*.so | head -1) libggml=$(ls "$2"/libggml.*.so | head -1)
gcc -O2 -o "$3" "$here/llamacpp_pp.c" -I"$1/include" -I"$1/ggml/include" "$libllama" "$libggml" "$2/libggml-base.so" \
  -Wl,-rpath,"$4"
