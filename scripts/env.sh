# Sourced by the scripts: a private runtime directory keeps lavapipe quiet
# ("XDG_RUNTIME_DIR is invalid"), and the build directory defaults to build/.
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -w "${XDG_RUNTIME_DIR}" ]; then
  export XDG_RUNTIME_DIR="/tmp/vkamp-xdg-$(id -u)"
  mkdir -p -m 700 "$XDG_RUNTIME_DIR"
fi
VKAMP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VKAMP_BUILD="${VKAMP_BUILD:-$VKAMP_ROOT/build}"
export VKAMP_ROOT VKAMP_BUILD
