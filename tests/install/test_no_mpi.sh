#!/usr/bin/env bash
# A build without MPI (ctest -L install): configures the tree again with
# -DVKAMP_WITH_MPI=OFF (headless, no benchmarks), builds the GPU training
# tests, checks that nothing links libmpi, and runs them all: a user without
# libopenmpi-dev gets a single-process vkamp that trains as before. The
# same tree has no dashboard (-DVKAMP_BUILD_UI=OFF): the samples and tools
# build without GLFW and ImGui, answer their flags, and refuse --report
# with exit status 2.
#   test_no_mpi.sh SOURCE_DIR
set -euo pipefail
source=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/vkamp-no-mpi.XXXXXX")
trap 'rm -rf "$work"' EXIT
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
echo "== configure with VKAMP_WITH_MPI=OFF"
cmake -S "$source" -B "$work" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVKAMP_WITH_MPI=OFF \
  -DVKAMP_BUILD_UI=OFF -DVKAMP_BUILD_BENCH=OFF >"$work/configure.log" || { cat "$work/configure.log"; exit 1; }
grep -q "MPI data parallelism OFF" "$work/configure.log" || { echo "FAIL: MPI was not switched off"; exit 1; }
echo "== build test_training"
cmake --build "$work" --target test_training --parallel "$(nproc)" >"$work/build.log" ||
  { tail -40 "$work/build.log"; exit 1; }
if ldd "$work/tests/test_training" | grep -i mpi; then echo "FAIL: the no-MPI build links MPI"; exit 1; fi
echo "== run test_training"
"$work/tests/test_training" --gtest_brief=1
echo "== build and run the samples' and tools' checks without the dashboard"
cmake --build "$work" --target test_cli test_samples --parallel "$(nproc)" >"$work/build.log" ||
  { tail -40 "$work/build.log"; exit 1; }
[ ! -e "$work/studio" ] || { echo "FAIL: a build without the UI has a studio folder"; exit 1; }
"$work/tests/test_cli" --gtest_brief=1
"$work/tests/test_samples" --gtest_brief=1 --gtest_filter='SampleCli.ReportWithoutTheDashboardExits2:SampleCli.ReportNeedsAPngNameAndAWritableDirectory'
