#!/usr/bin/env bash
# Quick start, second command: set up, build, and run the tests through
# ctest with the Khronos validation layer on (the test main forces it; any
# validation message fails the test). Extra arguments go to ctest, e.g.
# `scripts/test.sh -L shaders`. VKAMP_DEVICE picks the device. Without
# arguments (CI), it then checks the test bundle (scripts/test_bundle.sh
# packs the build and runs a subset of it from a clean directory) and runs
# the Windows leg (scripts/test-windows.sh --leg: the MinGW-w64 cross build,
# a subset of its tests under Wine on the same driver).
#
#   scripts/test.sh --linux          the Linux suite and the bundle, no Windows leg
#   scripts/test.sh --windows-full   the whole Windows suite alone
#   scripts/test.sh --windows-package  the zip (scripts/package-windows.sh)
#                                    from the existing cross build, unpacked
#                                    and run in a fresh Wine prefix
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
windows=""
case "${1:-}" in
  --linux | --windows-full | --windows-package) windows="$1"; shift ;;
esac
if [ "$windows" = --windows-package ]; then
  echo "== Windows package: the zip, unpacked into a fresh Wine prefix, run as a user would =="
  exec "$VKAMP_ROOT/scripts/test-windows-package.sh" "$@"
fi
if [ "$windows" = --windows-full ]; then
  echo "== Windows suite: the MinGW-w64 cross build, every test under Wine =="
  exec "$VKAMP_ROOT/scripts/test-windows.sh" "$@"
fi
"$VKAMP_ROOT/scripts/build.sh"
cd "$VKAMP_BUILD"
# Without arguments, every entry but the fuzzers (label `fuzz`: clang
# builds of each reader with ASan and UBSan, then a fixed run of inputs,
# about 280 CPU-s in all); every reader's committed corpus is replayed
# (fuzz_NAME_corpus) all the same. `scripts/test.sh -L fuzz` runs them.
# Nor the shader tests at a real model's largest sizes (label `large`,
# minutes each on lavapipe): `scripts/test.sh -L large` runs them.
if [ $# -eq 0 ]; then
  ctest --output-on-failure --timeout 300 -j "$(nproc)" -LE '^(fuzz|large)$'
else
  ctest --output-on-failure --timeout 300 -j "$(nproc)" "$@"
fi
[ $# -gt 0 ] || "$VKAMP_ROOT/scripts/test_bundle.sh"
if [ $# -eq 0 ] && [ "$windows" != --linux ]; then
  echo "== Windows leg: the MinGW-w64 cross build, a subset of its tests under Wine =="
  "$VKAMP_ROOT/scripts/test-windows.sh" --leg
fi
