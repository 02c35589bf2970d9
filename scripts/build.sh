#!/usr/bin/env bash
# Installs what is missing (scripts/setup.sh), then configures and builds
# everything into $VKAMP_BUILD (default build/). Safe to run again: only
# what changed is rebuilt. It configures a Release build: debug information
# cost a third more compile CPU (an -O2 -g object against -O3 without -g,
# measured on 2 cores), which every CI run paid. For a debugger, configure a
# tree of your own with -DCMAKE_BUILD_TYPE=RelWithDebInfo or Debug.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
"$VKAMP_ROOT/scripts/setup.sh"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$VKAMP_BUILD/CMakeCache.txt" ]; then
  cmake -S "$VKAMP_ROOT" -B "$VKAMP_BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$VKAMP_BUILD" --parallel "$(nproc)"
