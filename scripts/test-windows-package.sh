#!/usr/bin/env bash
# The Windows package's check: packs an existing cross build
# (scripts/package-windows.sh), unzips it into "C:\Zoë Test\vkamp paquet" of
# a fresh Wine prefix, and runs it there as a user would, under Xvfb:
#   - vkamp-info.exe lists the device (lavapipe here);
#   - run-tests.cmd ends with "N passed, 0 failed", N > 0, under the
#     validation layer; and once more without the layer (a machine with no
#     Vulkan SDK), saying so: Philox.* and the tests that make their own Context;
#   - fashion_mlp.exe without datasets\ names the file it looked for;
#   - vkamp-studio.exe --frames N --screenshot writes a PNG.
#
#   scripts/test-windows-package.sh [FILTER]
#
# FILTER goes to run-tests.cmd (a GoogleTest filter; default: every test).
# VKAMP_WIN_BUILD names the build (default build-mingw/, which
# scripts/build-windows.sh makes). What Vulkan needs under Wine is set on the
# host side, as scripts/wine-run.sh does: the process cannot see VK_* variables.
set -euo pipefail
if [ -z "${DISPLAY:-}" ]; then
  # A screen larger than the studio's 1600 x 1000 window and Wine's title bar.
  exec xvfb-run -a -s '-screen 0 1920x1200x24 -nolisten tcp' "$0" "$@"
fi
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
filter=("$@")  # none, or run-tests.cmd's filter
win_build="${VKAMP_WIN_BUILD:-$VKAMP_ROOT/build-mingw}"
work="$(mktemp -d "${TMPDIR:-/tmp}/vkamp-winpkg-XXXXXX")"
export WINEPREFIX="$work/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=;winedbg.exe=d"
export LC_ALL=C.UTF-8  # Wine reads the Unix names of files and arguments in the locale's charset
cleanup() {
  wineserver -k 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "== $* ($SECONDS s)"; }
fail() { echo "test-windows-package: FAILED: $*"; exit 1; }

step "package"
zip="$("$VKAMP_ROOT/scripts/package-windows.sh" "$win_build" "$work" | tee /dev/stderr | tail -1)"
step "a fresh Wine prefix"
wineboot -i >/dev/null 2>&1 || true
wineserver -p </dev/null >/dev/null 2>&1 || true  # one server for every step below (2: wineboot left one running)
dir="$WINEPREFIX/drive_c/Zoë Test/vkamp paquet"
mkdir -p "$dir"
unzip -q "$zip" -d "$dir"
cd "$dir"

# Host side: lavapipe's GALLIVM_PERF as the test main sets it on Linux, and
# the validation layer, which the process is told of (VKAMP_HOST_VALIDATION)
# because it cannot list it.
export GALLIVM_PERF=nopt
with_layer=(env VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation VKAMP_HOST_VALIDATION=1)
win() { timeout "$1" "${@:2}" </dev/null 2>&1 | tr -d '\r'; return "${PIPESTATUS[0]}"; }

step "vkamp-info.exe in C:\\Zoë Test\\vkamp paquet"
info="$(win 120 wine vkamp-info.exe)" || fail "vkamp-info.exe exited $?: $info"
echo "$info" | sed -n '1,12p'
grep -qi 'llvmpipe' <<<"$info" || fail "vkamp-info.exe does not list the lavapipe device"

step "run-tests.cmd ${filter[*]:-(every test)}, under the validation layer"
status=0
out="$(win 3000 "${with_layer[@]}" wine cmd /c run-tests.cmd "${filter[@]}")" || status=$?
echo "$out" | tail -n 12
summary="$(tail -n 1 <<<"$out")"
[[ $summary =~ ^([0-9]+)\ passed,\ 0\ failed$ ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] && [ $status = 0 ] ||
  fail "run-tests.cmd ended with \"$summary\", exit status $status"
grep -q 'under the Khronos validation layer' <<<"$out" || fail "run-tests.cmd did not run under the layer"

# Philox.* (no device work), and the tests that make a Context of their own,
# which must take the test main's VKAMP_TEST_VALIDATION=0 too.
no_layer='Philox.*:Engine.Fp16StorageFallbackGivesTheSameBits:Engine.ContextTeardownLeaksNothingAndSavesThePipelineCache'
no_layer+=':AttentionPath.IsTheDevicesUnlessSet'
step "run-tests.cmd $no_layer, with no validation layer"
status=0
out="$(win 600 wine cmd /c run-tests.cmd "$no_layer")" || status=$?
echo "$out" | tail -n 4
summary="$(tail -n 1 <<<"$out")"
[[ $summary =~ ^([0-9]+)\ passed,\ 0\ failed$ ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] && [ $status = 0 ] ||
  fail "run-tests.cmd without the layer ended with \"$summary\", exit status $status"
grep -q 'No Khronos validation layer' <<<"$out" || fail "run-tests.cmd did not say the layer is missing"

step "fashion_mlp.exe without datasets\\"
mv datasets "$work/datasets"
status=0
out="$(win 120 wine fashion_mlp.exe --max-steps 1)" || status=$?
mv "$work/datasets" datasets
echo "$out" | tail -n 2
[ $status = 2 ] || fail "fashion_mlp.exe without its data exited $status, not 2"
grep -q 'vkamp paquet.datasets.fashion-mnist.train-images-idx3-ubyte' <<<"$out" && grep -q 'zalandoresearch' <<<"$out" ||
  fail "fashion_mlp.exe does not name the missing file and where to get it"

step "vkamp-studio.exe --frames 30 --screenshot"
out="$(win 600 wine vkamp-studio.exe --frames 30 --screenshot "capture d'écran.png")" ||
  fail "vkamp-studio.exe exited $?: $(tail -n 5 <<<"$out")"
[ "$(head -c 8 "capture d'écran.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
  fail "vkamp-studio.exe wrote no PNG"
echo "studio: $(stat -c %s "capture d'écran.png") bytes of PNG"

step "passed: $(basename "$zip"), $(( $(stat -c %s "$zip") / 1024 / 1024 )) MiB"
