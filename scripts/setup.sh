#!/usr/bin/env bash
# Installs every Debian package vkamp needs to build, test and run.
# Idempotent: packages that are already installed are skipped, and apt is
# not touched at all when nothing is missing.
set -euo pipefail

packages=(
  cmake ninja-build g++ make pkg-config
  libvulkan-dev glslang-tools spirv-tools
  vulkan-validationlayers vulkan-tools mesa-vulkan-drivers
  libglfw3-dev libimgui-dev libstb-dev
  libgtest-dev zlib1g-dev libzip-dev zipcmp zipmerge ziptool nlohmann-json3-dev libyaml-cpp-dev
  clang-14 libfuzzer-14-dev libclang-rt-14-dev
  xvfb x11-apps imagemagick
  dataset-fashion-mnist fortunes
  openmpi-bin libopenmpi-dev
)
# zipcmp, zipmerge and ziptool: Debian 12's libzip CMake package refuses to
# load without them (its targets file checks the tools exist).
# fortunes: charlm's default text (plain files under /usr/share/games/fortunes).
# openmpi-bin, libopenmpi-dev: data-parallel training under mpirun;
# without them CMake turns VKAMP_WITH_MPI off and everything runs single-process.
# Extra packages for a caller that needs them (e.g. the PyTorch peer in bench/).
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
