#!/usr/bin/env bash
# CI check of the test bundle (scripts/bundle.sh): packs the build, unpacks
# the archive in a fresh temporary directory and runs a subset of the tests
# from there, with an environment that knows nothing of the build (env -i:
# PATH, HOME, TMPDIR and VKAMP_DEVICE only). Where a mount namespace can be
# made (root, or unprivileged user namespaces), the source and build trees
# are hidden from the run as well, so a path baked in at compile time fails
# here rather than on the user's machine.
#
#   scripts/test_bundle.sh [REGEX]
#
# REGEX picks the tests as run-tests.sh does; the default (the engine, the
# readers' corpora, the offscreen report, some of the shader tests on their
# default path and on two path variants, and one test of each suite that
# reads the data the bundle carries: golden fixtures, reader fixtures, the
# example configs, Fashion-MNIST, the sample binaries) takes about 15 s on two cores on
# lavapipe with a cold shader cache, packing the bundle (at xz -0) about 60 s.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
subset=${1:-'^test_engine |^fuzz_[a-z]+_corpus |^test_ui Report\.|^test_shaders Shaders/(Convert|Scale|Activation)\.|^shaders_gemm_tiled_path_fp16 Shaders/Gemm\.LinearForward/|^shaders_row_group_path_fp32 Shaders/LayerNorm\.ForwardAndBackward/|^test_io Safetensors\.ReadsAFile|^test_data NpyFixtures\.|^test_golden .*ForwardLoss.*/mlp_fp32|^test_samples SampleCli\.HelpExitsZero|^test_train_host (ConfigYaml\.ExampleFiles|Dataset\.LoadsRealFashionMnistTest)'}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
VKAMP_BUNDLE_XZ=0 "$VKAMP_ROOT/scripts/bundle.sh" "$VKAMP_BUILD" "$tmp"  # unpacked at once: the fastest preset
mkdir "$tmp/run"
tar -C "$tmp/run" -xJf "$tmp"/vkamp-tests-*.tar.xz
rm "$tmp"/vkamp-tests-*.tar.xz

run=(env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$tmp/run" TMPDIR="$tmp/run"
     ${VKAMP_DEVICE:+VKAMP_DEVICE="$VKAMP_DEVICE"} "$tmp/run/vkamp-tests/run-tests.sh" -j "$(nproc)" "$subset")
build="$(cd "$VKAMP_BUILD" && pwd)"
src="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")"
hide=("$src")
case "$build/" in "$src"/*) ;; *) hide+=("$build") ;; esac
case "$tmp/" in "$src"/* | "$build"/*) hide=() ;; esac  # TMPDIR inside the trees
ns=(unshare --mount)
[ "$(id -u)" = 0 ] || ns+=(--map-root-user)
if [ ${#hide[@]} -gt 0 ] && "${ns[@]}" true 2>/dev/null; then
  echo "test_bundle: running with ${hide[*]} hidden"
  # shellcheck disable=SC2016  # expanded by the inner shell
  exec "${ns[@]}" bash -c \
    'for d in "${@:2:$1}"; do mount -t tmpfs none "$d"; done; shift $(($1 + 1)); exec "$@"' \
    _ ${#hide[@]} "${hide[@]}" "${run[@]}"
fi
echo "test_bundle: no mount namespace here: the source and build trees stay visible"
exec "${run[@]}"
