#!/usr/bin/env bash
# Packs a build into one relocatable archive that runs vkamp's tests on any
# x86-64 Linux machine with a Vulkan driver, without a compiler, CMake or the
# Vulkan SDK (README: "Running the tests on another machine"):
#
#   scripts/bundle.sh [BUILD_DIR [OUT_DIR]]
#
# BUILD_DIR defaults to $VKAMP_BUILD (build/), OUT_DIR to BUILD_DIR; the last
# line printed is the archive's path, vkamp-tests-VERSION-x86_64.tar.xz. It
# unpacks into vkamp-tests/:
#   run-tests.sh  the runner (scripts/bundle/run-tests.sh)
#   check-gpu.sh  a GPU in one command (~8 min): GEMM tuning sweep, tensor-core
#                 tests, bench/gpu_vs_torch.sh, the rest of the tests
#   tests.list    every test ctest runs except those that need an X server,
#                 MPI, clang or a build tree: "entry, environment, command,
#                 gtest case", one line per case
#   bin/          the test and sample binaries, stripped copies, rpath $ORIGIN/../lib
#   lib/          every library they load but glibc and the GCC runtime
#                 (libstdc++, libgcc_s: a driver built against a newer one
#                 must not get ours), the Vulkan loader included
#   layers/       Debian's Khronos validation layer, its manifest pointing at it
#   data/         the directories the tests' compile definitions name, the
#                 Fashion-MNIST files; paths.env says which variable names each;
#                 charlm-corpus.txt, charlm's default text in one file
#   bench/        bench/gpu_vs_torch.sh and the PyTorch peers it runs (vkamp-bench
#                 is in bin/), tests/golden/ the GPT reference the charlm peer
#                 imports: vkamp-tests/bench/gpu_vs_torch.sh runs from here
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
build="$(cd "${1:-$VKAMP_BUILD}" && pwd)"
dest="$(cd "${2:-$build}" && pwd)"
# jq reads ctest's test list, patchelf sets the rpaths.
if ! command -v jq >/dev/null || ! command -v patchelf >/dev/null; then "$VKAMP_ROOT/scripts/setup.sh" jq patchelf; fi
src="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")"
version="$(git -C "$src" describe --tags --always --dirty 2>/dev/null || echo unknown)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
B="$stage/vkamp-tests"
mkdir -p "$B/bin" "$B/lib" "$B/layers" "$B/data"
echo "bundle: $build ($version)"

# The paths the tests were compiled with (VKAMP_GOLDEN_DIR="/src/tests/...")
# become data/<name> or bin/; run-tests.sh exports each under the same name.
: >"$B/data/paths.env"
declare -A map  # absolute path -> its place in the bundle, relative to it
defs=$({ awk '/^build /{t = ($2 ~ /^tests\/CMakeFiles\//)} t && /^  DEFINES = /' "$build/build.ninja" 2>/dev/null
         cat "$build"/tests/CMakeFiles/*/flags.make 2>/dev/null; } |
       grep -o 'VKAMP_[A-Z_]*=\\"/[^\\]*\\"' | tr -d '\\"' | sort -u || true)
for def in $defs; do
  name=${def%%=*} path=${def#*=}
  if [ "$path" = "$build/samples" ] || [ "$path" = "$build/bench" ]; then
    map[$path]=bin  # their programs, stripped (below), not the build's folder
  elif [ -d "$path" ]; then
    rel=data/$(echo "${name#VKAMP_}" | tr 'A-Z_' 'a-z-' | sed 's/-dir$//')
    cp -r "$path" "$B/$rel"
    map[$path]=$rel
  else
    echo "bundle: leaves out $name=$path (not a directory)"
    continue
  fi
  echo "$name=${map[$path]}" >>"$B/data/paths.env"
done
# The fuzz corpus replays take their corpus as an argument.
cp -r "$src/tests/fuzz/corpus" "$B/data/fuzz-corpus"
map[$src/tests/fuzz/corpus]=data/fuzz-corpus
# The samples' and the dataset tests' default Fashion-MNIST (Debian's
# dataset-fashion-mnist); VKAMP_FASHION_MNIST_DIR points there.
if [ -d /usr/share/datasets/fashion-mnist ]; then
  cp -r /usr/share/datasets/fashion-mnist "$B/data/fashion-mnist"
  echo "VKAMP_FASHION_MNIST_DIR=data/fashion-mnist" >>"$B/data/paths.env"
fi

# The tests, as ctest runs them: "name, labels, disabled, environment, argv".
(cd "$build" && ctest --show-only=json-v1) >"$stage/ctest.json"
jq -r '.tests[] | select(.command) | (.properties // []) as $p
  | [.name, ([$p[] | select(.name == "LABELS") | .value[]] | join(",") | if . == "" then "-" else . end),
     ([$p[] | select(.name == "DISABLED") | .value] | any),
     ([$p[] | select(.name == "ENVIRONMENT") | .value[]] | map(select(startswith("VKAMP_PIPELINE_CACHE=") | not)) | join(" ") | if . == "" then "-" else . end),
     (.command | join(" "))] | @tsv' "$stage/ctest.json" >"$stage/ctest.tsv"
# Binaries whose discovered cases ctest runs one by one (their gtest entries).
gtest_bins=" $(awk -F'\t' '$5 ~ / --gtest_also_run_disabled_tests$/ {split($5, a, " "); print a[1]}' "$stage/ctest.tsv" | sort -u | tr '\n' ' ')"

# Rewrites the paths in an environment or a command into the bundle's
# (@B@/...), and fails on any other path into the source or build tree.
to_bundle() {
  local s=$1 p
  for p in "${!map[@]}"; do s=${s//$p/@B@/${map[$p]}}; done
  case "$s" in *"$src"* | *"$build"*) return 1 ;; esac
  printf '%s' "$s"
}

left_out=()
{
  echo "# entry	environment	command	gtest case (- for a plain command)"
  while IFS=$'\t' read -r name labels disabled env cmd; do
    exe=${cmd%% *} args=""
    [ "$exe" = "$cmd" ] || args=${cmd#* }
    # MPI, clang (fuzz), the install and build tests, the `large` cases
    # (minutes each on a CPU driver), vkamp-studio (Xvfb),
    # the host-only checks of every binary's flags (they start the bench and
    # studio binaries from the build tree), anything that is not one of the
    # build's binaries (scripts), disabled cases.
    if [[ ",$labels," =~ ,(mpi|fuzz|install|cli|floors|large), || $name == Studio.* || $disabled == true ||
          $exe != "$build"/* || ! -x $exe ]]; then
      left_out+=("$name"); continue
    fi
    env=$(to_bundle "$env") && args=$(to_bundle "$args") || { left_out+=("$name (a path into the tree)"); continue; }
    base=$(basename "$exe")
    [ -e "$B/bin/$base" ] || cp "$exe" "$B/bin/$base"
    if [[ $args == "--gtest_filter=$name --gtest_also_run_disabled_tests" ]]; then
      printf '%s\t%s\t%s\t%s\n' "$base" "$env" "$base" "$name"
    elif [[ $args == --gtest_filter=*\** && $args == *" --gtest_also_run_disabled_tests" ]]; then
      # A group of cases (cmake/GroupGTestCases.cmake): its cases one by one,
      # under the binary's name as if discovered.
      "$exe" --gtest_list_tests "${args% *}" |
        awk -v b="$base" -v env="$env" '/^[^ ]/ {suite = $1} /^  [^ ]/ {print b "\t" env "\t" b "\t" suite $1}'
    elif [[ $gtest_bins == *" $exe "* ]]; then
      # A path variant (--vkamp_variant=NAME): the cases its filter picks,
      # less the X-server ones, each then run with the variant's flag.
      filter=$(sed -n 's/.*--gtest_filter=\([^ ]*\).*/\1/p' <<<"$args")
      rest=$(sed 's/--gtest_filter=[^ ]*//; s/  */ /g; s/^ //; s/ $//' <<<"$args")
      "$exe" $rest --gtest_list_tests ${filter:+"--gtest_filter=$filter"} |
        awk -v e="$name" -v env="$env" -v c="$base${rest:+ $rest}" '
          /^[^ ]/ {suite = $1} /^  [^ ]/ && suite != "Studio." {print e "\t" env "\t" c "\t" suite $1}'
    else
      printf '%s\t%s\t%s\t-\n' "$name" "$env" "$base${args:+ $args}"
    fi
  done <"$stage/ctest.tsv"
} >"$B/tests.list"
echo "bundle: $(grep -vc '^#' "$B/tests.list") tests; left out of ctest's:$(printf '%s\n' "${left_out[@]}" | sed 's/\..*/.*/' | uniq -c | awk '{printf " %s%s", $2, ($1 > 1 ? " (" $1 ")" : "")}')"

# The samples the tests start (VKAMP_SAMPLES_DIR), vkamp-info first.
# (Not overflow_storm_without_dashboard: its test runs in the build's ctest only.)
for f in "$build"/samples/*; do
  [[ $f == *_without_dashboard ]] && continue
  [ -f "$f" ] && [ -x "$f" ] && [ ! -e "$B/bin/$(basename "$f")" ] && cp "$f" "$B/bin/"
done
[ -x "$B/bin/vkamp-info" ] || { echo "bundle: $build/samples/vkamp-info is missing"; exit 1; }

# bench/gpu_vs_torch.sh and what it runs: vkamp-bench, the
# PyTorch peers with the GPT reference at the same place relative to them,
# and charlm's default text, which a machine without Debian's fortunes lacks:
# its files concatenated as charlm reads them (by name, byte order).
if [ -x "$build/bench/vkamp-bench" ]; then
  cp "$build/bench/vkamp-bench" "$B/bin/"
else
  echo "bundle: no $build/bench/vkamp-bench (VKAMP_BUILD_BENCH off?): gpu_vs_torch.sh will lack its GEMM part"
fi
# gguf-forward-bench, llama-prefill-bench and bench/gguf_vs_llamacpp.sh: the forward and the prompt against
# llama.cpp's Vulkan backend (issue 53), which check-gpu.sh runs where the
# bundle carries llama.cpp (VKAMP_BUNDLE_LLAMACPP=1, below).
for b in gguf-forward-bench llama-prefill-bench; do
  [ ! -x "$build/bench/$b" ] || cp "$build/bench/$b" "$B/bin/"
done
mkdir -p "$B/bench" "$B/tests/golden"
install -m 755 "$src/bench/gpu_vs_torch.sh" "$src/bench/gguf_vs_llamacpp.sh" "$src/bench/qlora_rate.sh" "$B/bench/"
cp "$src/bench/turns.sh" "$src"/bench/*.py "$B/bench/"
cp "$src/tests/golden/gpt_reference.py" "$src/tests/golden/safetensors_writer.py" "$B/tests/golden/"
fortunes=/usr/share/games/fortunes
if [ -d "$fortunes" ]; then
  find "$fortunes" -maxdepth 1 -type f ! -name '*.dat' -print0 | LC_ALL=C sort -z | xargs -0 cat \
    >"$B/data/charlm-corpus.txt"
else
  echo "bundle: no $fortunes (apt-get install fortunes): gpu_vs_torch.sh will need --text FILE"
fi

# Libraries: all that ldd finds but glibc's and the GCC runtime.
layer_json=""
for d in /usr/share/vulkan/explicit_layer.d /etc/vulkan/explicit_layer.d /usr/local/share/vulkan/explicit_layer.d; do
  [ -f "$d/VkLayer_khronos_validation.json" ] && layer_json="$d/VkLayer_khronos_validation.json" && break
done
[ -n "$layer_json" ] || { echo "bundle: no Khronos validation layer (apt-get install vulkan-validationlayers)"; exit 1; }
layer_lib=$(jq -r .layer.library_path "$layer_json")
[[ $layer_lib != ./* && $layer_lib != ../* ]] || layer_lib="$(dirname "$layer_json")/$layer_lib"
if [[ $layer_lib != */* ]]; then  # a bare name: where the dynamic loader would find it
  for d in /usr/local/lib /usr/lib/x86_64-linux-gnu /usr/lib; do
    [ -f "$d/$layer_lib" ] && layer_lib="$d/$layer_lib" && break
  done
fi
cp "$layer_lib" "$B/layers/"
jq --arg l "./$(basename "$layer_lib")" '.layer.library_path = $l' "$layer_json" >"$B/layers/$(basename "$layer_json")"
system='^(linux-vdso|ld-linux-x86-64|libc|libm|libmvec|libdl|libpthread|librt|libresolv|libutil|libanl|libstdc\+\+|libgcc_s)\.so'
for f in "$B"/bin/* "$B"/layers/*.so; do
  ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3} $2 == "=>" && $3 == "not" {print "MISSING", $1}'
done | sort -u | while read -r soname path; do
  [ "$soname" != MISSING ] || { echo "bundle: a binary needs $path, which is not installed"; exit 1; }
  [[ $soname =~ $system ]] || cp -L "$path" "$B/lib/$soname"
done
# The binaries open the Vulkan loader at run time (cmake/VulkanForwarders.cmake),
# so ldd does not list it: the bundle carries this machine's.
if [ ! -e "$B/lib/libvulkan.so.1" ]; then
  loader=$(ldconfig -p | awk '!f && /libvulkan\.so\.1 .*x86-64/ {print $NF; f = 1}')
  [ -n "$loader" ] || { echo "bundle: no libvulkan.so.1 here to carry (the binaries open it at run time)"; exit 1; }
  cp -L "$loader" "$B/lib/libvulkan.so.1"
fi
for f in "$B"/bin/* "$B"/lib/* "$B"/layers/*.so; do
  strip --strip-unneeded "$f"
done
for f in "$B"/bin/*; do patchelf --set-rpath '$ORIGIN/../lib' "$f"; done
for f in "$B"/lib/*; do patchelf --set-rpath '$ORIGIN' "$f"; done

# VKAMP_BUNDLE_LLAMACPP=1: llamacpp/ carries what bench/gguf_vs_llamacpp.sh
# needs of llama.cpp on a machine that has none (no compiler, no network):
# node-llama-cpp's prebuilt Vulkan libraries (lib/; 82 MB unpacked in all,
# 10.6 MiB at xz -6: the archive and the tree then pass the device tool's
# 64 MiB, which the check below says),
# bench/llamacpp_pp.c built against them, gguf-py and the vocabulary it
# copies. LLAMA_CPP and LLAMA_LIBS say where they are (the script's defaults).
if [ "${VKAMP_BUNDLE_LLAMACPP:-0}" = 1 ]; then
  llama_cpp="${LLAMA_CPP:-/work/llamacpp/llama.cpp}"
  llama_libs="${LLAMA_LIBS:-/work/llamacpp/node_modules/@node-llama-cpp/linux-x64-vulkan/bins/linux-x64-vulkan}"
  L="$B/llamacpp"
  mkdir -p "$L/lib" "$L/gguf-py" "$L/models"
  cp "$llama_libs"/*.so "$L/lib/"
  "$src/bench/llamacpp_pp_build.sh" "$llama_cpp" "$llama_libs" "$L/llamacpp_pp" '$ORIGIN/lib'
  cp -r "$llama_cpp/gguf-py/gguf" "$L/gguf-py/"
  cp "$llama_cpp/models/ggml-vocab-llama-spm.gguf" "$L/models/"
  echo "bundle: carries llama.cpp's Vulkan build from $llama_libs ($(du -sh "$L" | cut -f1))"
fi

# What the binaries need of the system: glibc and libstdc++ at least these.
need() { objdump -T "$B"/bin/* "$B"/lib/* "$B"/layers/*.so | grep -o "$1_[0-9.]*" | sort -uV | tail -1; }
printf '%s (%s, %s or newer)\n' "$version" "$(need GLIBC)" "$(need GLIBCXX)" >"$B/VERSION"
install -m 755 "$VKAMP_ROOT/scripts/bundle/run-tests.sh" "$B/run-tests.sh"
install -m 755 "$VKAMP_ROOT/scripts/bundle/check-gpu.sh" "$B/check-gpu.sh"

archive="$dest/vkamp-tests-$version-x86_64.tar.xz"
# VKAMP_BUNDLE_XZ is xz's preset (default 6). scripts/test_bundle.sh, which
# unpacks the archive at once, packs at 0: 27 CPU-s where 6 took about 150
# of the bundle's 180 (2 cores, 253 MB unpacked), 90 MiB where 6 gives 71.
# The size limits below are the device tool's, so only the default checks them.
# Every binary links libvkamp (its code and the embedded shaders) statically:
# in one stream with a window wider than the whole archive, xz finds each
# binary's copy in the one before it. Threads would cut the stream into
# blocks that cannot refer to each other, and preset 6's 8 MiB window holds
# barely one binary.
preset=${VKAMP_BUNDLE_XZ:-6}
xz_opt="-$preset -T0"
[ "$preset" = 0 ] || xz_opt="-T1 --lzma2=preset=$preset,dict=$(( $(du -sm "$stage" | cut -f1) + 16 ))MiB"
XZ_OPT="$xz_opt" tar -C "$stage" -cJf "$archive" vkamp-tests
size=$(stat -c %s "$archive")
echo "bundle: $(du -sh "$B" | cut -f1) unpacked, $((size / 1024 / 1024)) MiB packed (xz -$preset)"
if [ "$preset" != 6 ]; then
  echo "$archive"
  exit 0
fi
# The device tool carries 64 MiB in all: the archive, the loader packages
# and the working tree (about 9 MiB tracked). Packed in one stream (above),
# the bundle measured 47.5 MiB where -6 -T0 gave 55.8 (2026-11-28).
tree=$(git -C "$src" ls-files -z 2>/dev/null | (cd "$src" && xargs -0 cat 2>/dev/null) | wc -c)
room=$((64 * 1024 * 1024 - tree - 2 * 1024 * 1024))
[ "$size" -le "$room" ] ||
  echo "bundle: warning: $archive and the working tree ($((tree / 1024 / 1024)) MiB) are over the device tool's 64 MiB"
[ "$size" -le $((64 * 1024 * 1024)) ] || { echo "bundle: $archive is over 64 MiB, the device tool's carry limit"; exit 1; }
echo "$archive"
