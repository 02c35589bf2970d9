#!/usr/bin/env bash
# Packs the Windows cross build into one zip a Windows user unpacks into any
# folder and runs with nothing installed but a GPU driver (README: Windows):
#
#   scripts/package-windows.sh [WIN_BUILD_DIR [OUT_DIR]]
#
# WIN_BUILD_DIR defaults to $VKAMP_WIN_BUILD (build-mingw/, made by
# scripts/build-windows.sh), OUT_DIR to WIN_BUILD_DIR. The last line printed
# is the zip's path, vkamp-VERSION-windows-x86_64.zip. Its files sit at the
# top (no folder of its own: Windows' "Extract all" makes one):
#   *.exe           the studio, the tools, the samples and vkamp-bench,
#                   stripped; static, so they import Windows' own DLLs
#                   alone (checked below) and open vulkan-1.dll at run time
#   run-tests.cmd   the GPU tests on the user's device (scripts/windows-package/)
#   tests\          the test programs it runs (tests.list), and data\ the
#                   fixtures they read (each compile definition of a path)
#   datasets\fashion-mnist\  Fashion-MNIST where this machine has it
#                   (Debian's dataset-fashion-mnist, MIT), where the samples
#                   look by default (platform::shared_data_dir)
#   README.txt      for Windows users (scripts/windows-package/README.txt)
# Text files get CRLF line endings, for Notepad and cmd.exe.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
build="$(cd "${1:-${VKAMP_WIN_BUILD:-$VKAMP_ROOT/build-mingw}}" && pwd)"
dest="$(cd "${2:-$build}" && pwd)"
here="$VKAMP_ROOT/scripts/windows-package"
strip=x86_64-w64-mingw32-strip objdump=x86_64-w64-mingw32-objdump
command -v "$strip" >/dev/null || "$VKAMP_ROOT/scripts/setup.sh" binutils-mingw-w64-x86-64
command -v zip >/dev/null || "$VKAMP_ROOT/scripts/setup.sh" zip
src="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")"
version="$(git -C "$src" describe --tags --always --dirty 2>/dev/null || echo unknown)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
P="$stage/pkg"
mkdir -p "$P/tests/data"
echo "package-windows: $build ($version)"

# The programs: every sample and tool, the studio, the benchmark.
# (Not overflow_storm_without_dashboard: a build check, its twin is here.)
for f in "$build"/samples/*.exe "$build/studio/vkamp-studio.exe" "$build/bench/vkamp-bench.exe"; do
  [[ $f == *_without_dashboard.exe ]] || [ ! -f "$f" ] || cp "$f" "$P/"
done
for need in vkamp-info vkamp-train vkamp-predict vkamp-studio vkamp-bench; do
  [ -f "$P/$need.exe" ] || { echo "package-windows: no $need.exe in $build (scripts/build-windows.sh builds it)"; exit 1; }
done

# The tests a user runs on their own GPU: those that need no X server, MPI,
# Python, child programs or build tree (the shaders', the engine's, the
# graph's, the training suite), each run whole by run-tests.cmd.
tests=(test_shaders test_engine test_graph test_training)
for t in "${tests[@]}"; do
  [ -f "$build/tests/$t.exe" ] || { echo "package-windows: no tests/$t.exe in $build"; exit 1; }
  cp "$build/tests/$t.exe" "$P/tests/"
done
# Each path a test was compiled with (VKAMP_GOLDEN_DIR="/src/tests/...")
# travels as tests\data\<name>; run-tests.cmd sets the variable of the same
# name there. A new one must be mapped here and there, or the package fails.
defs=$(for t in "${tests[@]}"; do
         awk -v t="$t" '/^build /{on = ($2 ~ ("^tests/CMakeFiles/" t "\\.dir/"))} on && /^  DEFINES = /' "$build/build.ninja"
       done | grep -o 'VKAMP_[A-Z_]*=\\"/[^\\]*\\"' | tr -d '\\"' | sort -u || true)
for def in $defs; do
  case "${def%%=*}" in
    VKAMP_GOLDEN_DIR) cp -r "${def#*=}" "$P/tests/data/golden" ;;
    *) echo "package-windows: a packaged test reads $def, which run-tests.cmd does not set"; exit 1 ;;
  esac
done
{
  echo "# The test programs run-tests.cmd runs, one a line (in tests\\)."
  for t in "${tests[@]}"; do echo "$t.exe"; done
} >"$P/tests/tests.list"

# Fashion-MNIST: 30 MB of gzipped IDX files, already compressed; shipped so
# that the studio trains at its first start. Without it the README says how
# to get it, and the samples name the file they looked for.
fashion=/usr/share/datasets/fashion-mnist
if [ -d "$fashion" ]; then
  mkdir -p "$P/datasets/fashion-mnist"
  cp "$fashion"/*-ubyte* "$P/datasets/fashion-mnist/"
  cp /usr/share/doc/dataset-fashion-mnist/copyright "$P/datasets/fashion-mnist/COPYRIGHT.txt"
  note="This package carries them (Zalando SE's, MIT license)."
else
  echo "package-windows: no $fashion here (apt-get install dataset-fashion-mnist): the zip goes without it"
  note="This package does not carry them: download the four files from
https://github.com/zalandoresearch/fashion-mnist (its data/fashion folder)
into datasets\\fashion-mnist beside the programs."
fi

for f in "$P"/*.exe "$P"/tests/*.exe; do "$strip" --strip-unneeded "$f"; done
# Only Windows' own DLLs: no MinGW runtime (libstdc++-6, libgcc_s_seh-1,
# libwinpthread-1) and no vulkan-1.dll, which the programs load themselves.
system='^(kernel32|user32|gdi32|shell32|advapi32|msvcrt|ole32|oleaut32|ws2_32|imm32|winmm|version|shlwapi|comdlg32|dwmapi|bcrypt|ntdll|api-ms-win-.*)\.dll$'
imports=$(for f in "$P"/*.exe "$P"/tests/*.exe; do "$objdump" -p "$f" | sed -n 's/^\tDLL Name: //p'; done |
          tr 'A-Z' 'a-z' | sort -u)
bad=$(grep -Ev "$system" <<<"$imports" || true)
[ -z "$bad" ] || { echo "package-windows: the programs import DLLs Windows lacks: $bad"; exit 1; }
echo "package-windows: the programs import $(tr '\n' ' ' <<<"$imports")"

# CRLF text; README.txt starts with UTF-8's byte-order mark, for older Notepads.
crlf() { sed 's/\r$//; s/$/\r/'; }
crlf <"$here/run-tests.cmd" >"$P/run-tests.cmd"
crlf <"$P/tests/tests.list" >"$P/tests/tests.list.crlf" && mv "$P/tests/tests.list.crlf" "$P/tests/tests.list"
{
  printf '\xef\xbb\xbf'
  # (The note through the environment: awk -v would read its backslashes as escapes.)
  NOTE="$note" awk -v v="$version" '{gsub(/@VERSION@/, v); if ($0 == "@FASHION_MNIST@") print ENVIRON["NOTE"]; else print}' \
    "$here/README.txt" | crlf
} >"$P/README.txt"

# Written beside its place, then moved there: no half-written zip under the name.
zipfile="$dest/vkamp-$version-windows-x86_64.zip"
(cd "$P" && zip -q -X -r -9 "$stage/package.zip" .)
mv -f "$stage/package.zip" "$zipfile.part"
mv -f "$zipfile.part" "$zipfile"
echo "package-windows: $(find "$P" -type f | wc -l) files, $(du -sh "$P" | cut -f1) unpacked, $(( $(stat -c %s "$zipfile") / 1024 / 1024 )) MiB zipped"
echo "$zipfile"
