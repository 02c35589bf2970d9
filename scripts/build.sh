#!/usr/bin/env bash
# Installs what is missing (scripts/setup.sh), then configures and builds
# everything into $VKAMP_BUILD (default build/). Safe to run again: only
# what changed is rebuilt.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
"$VKAMP_ROOT/scripts/setup.sh"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$VKAMP_BUILD/CMakeCache.txt" ]; then
  cmake -S "$VKAMP_ROOT" -B "$VKAMP_BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$VKAMP_BUILD" --parallel "$(nproc)"
