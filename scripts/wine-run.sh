#!/usr/bin/env bash
# Runs a program of the Windows cross build under Wine: ctest's runner and
# the build's (CMAKE_CROSSCOMPILING_EMULATOR, cmake/mingw-w64.cmake).
# What Vulkan needs is set here, on the host side, because Wine keeps VK_*
# variables from the Windows process and a change the process makes to its
# own environment never reaches the host's loader and driver:
#  - the Khronos validation layer (VK_INSTANCE_LAYERS): the process cannot
#    list it, so VKAMP_HOST_VALIDATION=1 tells vkamp it is there;
#  - lavapipe's GALLIVM_PERF (the test main sets it on Linux);
#  - a display: winevulkan makes no instance without an X server, so without
#    DISPLAY the program runs under its own Xvfb, larger than the studio's
#    1600 x 1000 window (Wine adds its title bar and clamps to the screen).
set -euo pipefail
cache="${XDG_CACHE_HOME:-$HOME/.cache}/vkamp"
export WINEPREFIX="${VKAMP_WINEPREFIX:-$cache/wine-prefix}"
export WINEDEBUG="${WINEDEBUG:--all}"
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree,mshtml=;winedbg.exe=d}"  # no Mono or Gecko dialogs, no debugger on a crash
export GALLIVM_PERF="${GALLIVM_PERF-nopt}"
# The host's Fashion-MNIST and fortunes (Z:\usr\share under Wine), where a
# Windows install keeps them beside the programs.
export VKAMP_SHARED_DATA_DIR="${VKAMP_SHARED_DATA_DIR:-/usr/share}"
if [ "${VKAMP_VALIDATION_LAYER:-1}" != 0 ]; then
  export VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation VKAMP_HOST_VALIDATION=1
fi
if [ ! -d "$WINEPREFIX" ]; then
  mkdir -p "$(dirname "$WINEPREFIX")"
  wineboot -i >/dev/null 2>&1 || true
fi
set +e  # the program's own exit status is the answer
if [ -z "${DISPLAY:-}" ] && [ "${VKAMP_WINE_NO_DISPLAY:-0}" != 1 ]; then
  auth="$(mktemp "${TMPDIR:-/tmp}/vkamp-xauth-XXXXXX")"
  trap 'rm -f "$auth"' EXIT
  xvfb-run -a -f "$auth" -s '-screen 0 1920x1200x24' wine "$@" | tr -d '\r'
  exit "${PIPESTATUS[0]}"
fi
wine "$@" | tr -d '\r'
exit "${PIPESTATUS[0]}"
