#!/usr/bin/env bash
# Cross-builds the whole tree for 64-bit Windows with MinGW-w64 into
# $VKAMP_WIN_BUILD (default build-mingw/): engine, samples, tools, bench,
# dashboard, studio and tests, static (no MinGW DLL needed). Its programs
# run here under Wine (scripts/wine-run.sh; ctest does so by itself).
# The dependencies Debian has no MinGW package of are built once from
# Debian's source packages into a cached prefix (scripts/windows-deps.sh),
# under $XDG_CACHE_HOME/vkamp (else ~/.cache/vkamp), reused when present.
# Shaders are compiled by the host's glslang as in the Linux build, and the
# SPIR-V pass the shader build runs is the Linux build's.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
# MinGW-w64 (GCC 12, posix threads), its zlib, Wine 8, and dpkg-source for the source packages.
"$VKAMP_ROOT/scripts/setup.sh" g++-mingw-w64-x86-64-posix libz-mingw-w64-dev wine wine64 dpkg-dev
win_build="${VKAMP_WIN_BUILD:-$VKAMP_ROOT/build-mingw}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/vkamp"
# The number names the dependency set: raise it when windows-deps.sh changes.
prefix="${VKAMP_MINGW_DEPS:-$cache/mingw-deps-1}"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

# The host's SPIR-V pass, from the Linux build (configured if need be).
if [ ! -f "$VKAMP_BUILD/CMakeCache.txt" ]; then
  cmake -S "$VKAMP_ROOT" -B "$VKAMP_BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$VKAMP_BUILD" --target vkamp-spirv-khr --parallel "$(nproc)"

"$VKAMP_ROOT/scripts/windows-deps.sh" "$prefix"

export VKAMP_MINGW_PREFIX="$prefix" PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig"
if [ ! -f "$win_build/CMakeCache.txt" ]; then
  cmake -S "$VKAMP_ROOT" -B "$win_build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$VKAMP_ROOT/cmake/mingw-w64.cmake" -DVKAMP_MINGW_PREFIX="$prefix" \
    -DVKAMP_HOST_SPIRV_KHR="$VKAMP_BUILD/tools/spirv_khr/vkamp-spirv-khr" \
    -DZLIB_LIBRARY=/usr/x86_64-w64-mingw32/lib/libz.a -DZLIB_INCLUDE_DIR=/usr/x86_64-w64-mingw32/include \
    -DVKAMP_WITH_MPI=OFF
fi
cmake --build "$win_build" --parallel "$(nproc)"
