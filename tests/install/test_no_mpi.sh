#!/usr/bin/env bash
# A build without MPI (ctest -L install): configures the tree again with
# -DVKAMP_WITH_MPI=OFF (headless, no benchmarks) and checks that CMake
# switched MPI off; then checks that BINARY, the training tests linked from
# this build's objects with the world of one (tests/CMakeLists.txt,
# test_training_without_mpi), loads no libmpi. The training_without_mpi
# entry runs the trainer's cases: a user without libopenmpi-dev gets a
# single-process vkamp that trains as before.
#   test_no_mpi.sh SOURCE_DIR BINARY
set -euo pipefail
source=$1 binary=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/vkamp-no-mpi.XXXXXX")
trap 'rm -rf "$work"' EXIT
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
echo "== configure with VKAMP_WITH_MPI=OFF"
cmake -S "$source" -B "$work" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVKAMP_WITH_MPI=OFF \
  -DVKAMP_BUILD_UI=OFF -DVKAMP_BUILD_BENCH=OFF >"$work/configure.log" || { cat "$work/configure.log"; exit 1; }
grep -q "MPI data parallelism OFF" "$work/configure.log" || { echo "FAIL: MPI was not switched off"; exit 1; }
echo "== $binary links no MPI"
[ -x "$binary" ] || { echo "FAIL: $binary is not built"; exit 1; }
if ldd "$binary" | grep -i mpi; then echo "FAIL: the no-MPI build links MPI"; exit 1; fi
echo "no-MPI build: configured, and $(basename "$binary") links no libmpi"
