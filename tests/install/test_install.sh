#!/usr/bin/env bash
# The install test (ctest -L install): vkamp as a user outside the tree gets it.
#   test_install.sh BUILD_DIR EXAMPLES_DIR CXX
# 1. `cmake --install BUILD_DIR` into a temporary prefix;
# 2. every EXAMPLES_DIR/*/ with a CMakeLists.txt is configured against that
#    prefix (find_package(vkamp)), and each executable it builds is run with
#    the Khronos validation layer on: it must exit 0, print no validation
#    message, and not link GLFW or Dear ImGui (the library is headless);
# 3. examples/train_mlp/main.cpp is compiled and linked with g++ and
#    nothing but `pkg-config --cflags --libs vkamp`.
set -euo pipefail
build=$1 examples=$2 cxx=$3

work=$(mktemp -d "${TMPDIR:-/tmp}/vkamp-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

echo "== cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; exit 1; }
# The shaders are compiled into libvkamp.a: nothing to install beside it.
if find "$prefix" -name '*.spv' | grep -q .; then fail "SPIR-V files were installed"; fi

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

# A binary that links a windowing or GUI library is not headless.
check_headless() {
  local bin=$1
  if readelf -d "$bin" | grep NEEDED | grep -qi -e glfw -e imgui; then
    fail "$bin depends on GLFW or ImGui: $(readelf -d "$bin" | grep NEEDED | grep -i -e glfw -e imgui)"
  fi
  if nm -C "$bin" | grep -qi -e glfw -e 'ImGui::'; then
    fail "$bin holds GLFW or ImGui symbols: $(nm -C "$bin" | grep -i -e glfw -e 'ImGui::' | head -3)"
  fi
}

found=0
for dir in "$examples"/*/; do
  [ -f "$dir/CMakeLists.txt" ] || continue
  found=$((found + 1))
  name=$(basename "$dir")
  out=$work/build-$name
  echo "== example $name: configure and build against the installed package"
  # No build type (no optimization): the example's own code is a few calls
  # into the installed library, which keeps its own flags; -O3 made this
  # entry one of the suite's longest (86 s cold at ctest -j2).
  if ! cmake -S "$dir" -B "$out" "${generator[@]}" -DCMAKE_BUILD_TYPE= \
         -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" >"$work/$name-configure.log" 2>&1; then
    cat "$work/$name-configure.log"; fail "$name: configure"; continue
  fi
  if ! cmake --build "$out" --parallel 2 >"$work/$name-build.log" 2>&1; then
    cat "$work/$name-build.log"; fail "$name: build"; continue
  fi
  # Each executable the project builds (top level of its build tree) runs.
  mapfile -t bins < <(find "$out" -maxdepth 1 -type f -executable | sort)
  [ "${#bins[@]}" -gt 0 ] || { fail "$name: the project builds no executable"; continue; }
  for bin in "${bins[@]}"; do
    check_headless "$bin"
    echo "== example $name: run $(basename "$bin") with the validation layer"
    status=0
    log=$work/$name-$(basename "$bin").out
    # From the scratch directory: an installed program needs no files from the tree.
    # VKAMP_VALIDATION=1 does for any vkamp program what the test main does:
    # Context loads VK_LAYER_KHRONOS_validation (or throws if it is missing)
    # and prints every layer message as "vkamp: validation ...". Not
    # VK_INSTANCE_LAYERS: the loader warns about that variable itself, and
    # the warning would count as a message.
    (cd "$work" && VKAMP_VALIDATION=1 "$bin") >"$log" 2>&1 || status=$?
    cat "$log"
    [ "$status" -eq 0 ] || fail "$name: $(basename "$bin") exited with status $status"
    if grep -q -e 'VUID-' -e 'Validation Error' -e 'Validation Warning' -e 'vkamp: validation' "$log"; then
      fail "$name: $(basename "$bin"): the validation layer reported messages"
    fi
  done
done
[ "$found" -gt 0 ] || fail "no example with a CMakeLists.txt under $examples"

echo "== pkg-config: compile examples/train_mlp/main.cpp with g++"
pc=$(find "$prefix" -name vkamp.pc | head -1)
if [ -z "$pc" ]; then
  fail "vkamp.pc was not installed"
else
  flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs vkamp) || fail "pkg-config vkamp"
  echo "pkg-config --cflags --libs vkamp: $flags"
  # shellcheck disable=SC2086  # the flags are words
  if "$cxx" -std=c++20 -O1 "$examples/train_mlp/main.cpp" $flags -o "$work/train_mlp_pkgconfig"; then
    check_headless "$work/train_mlp_pkgconfig"
  else
    fail "g++ with pkg-config flags"
  fi
fi

if [ "$failures" -ne 0 ]; then
  echo "install test: $failures failure(s)"
  exit 1
fi
echo "install test: $found example(s) and pkg-config OK"
