#!/usr/bin/env bash
# Builds what the Windows cross build links and Debian ships no MinGW
# package of, from Debian 12's source packages, into one cached prefix:
# GLFW 3.3.8, Dear ImGui 1.86 (with its GLFW and Vulkan backends), yaml-cpp
# 0.7.0 and libzip 1.7.3, GoogleTest from /usr/src/googletest, stb's image
# writer and reader from libstb-dev's headers; the Vulkan and nlohmann-json
# headers are copied from the host's. Nothing is copied into the repository.
# The sources come through `apt-get source --download-only` with a sources
# list and state of its own (deb-src of the host's mirror), never /etc/apt.
#   scripts/windows-deps.sh PREFIX
# A PREFIX holding .complete is left as it is.
set -euo pipefail
prefix="$1"
[ -f "$prefix/.complete" ] && exit 0
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$prefix.work"
rm -rf "$work" "$prefix"
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/src" "$prefix"
jobs="$(nproc)"
toolchain=(-DCMAKE_TOOLCHAIN_FILE="$root/cmake/mingw-w64.cmake" -DVKAMP_MINGW_PREFIX="$prefix"
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -G Ninja
  -DCMAKE_CROSSCOMPILING_EMULATOR=)  # nothing of theirs runs
zlib=/usr/x86_64-w64-mingw32/lib/libz.a

echo "deb-src http://deb.debian.org/debian bookworm main" >"$work/apt/sources.list"
apt=(-o Dir::Etc::SourceList="$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o Dir::State::Lists="$work/apt/lists" -o Dir::Cache="$work/apt/cache" -o APT::Sandbox::User=root -qq)
apt-get "${apt[@]}" update
(cd "$work/src" && apt-get "${apt[@]}" source --download-only glfw3=3.3.8-1 imgui=1.86+ds-1 \
  yaml-cpp=0.7.0+dfsg-8 libzip=1.7.3-1 >/dev/null)
# apt checked every file against the signed Sources index; dpkg-source
# has no keyring of Debian's uploaders to check the .dsc signatures again.
for dsc in "$work"/src/*.dsc; do
  (cd "$work/src" && dpkg-source --no-check -x "$dsc" >/dev/null)
done

build() {  # NAME SOURCE_DIR CMAKE_ARGS...
  local name="$1" src="$2"
  shift 2
  echo "windows-deps: $name"
  cmake -S "$src" -B "$work/build-$name" "${toolchain[@]}" "$@" >"$work/$name.log" 2>&1 &&
    cmake --build "$work/build-$name" --parallel "$jobs" >>"$work/$name.log" 2>&1 &&
    cmake --install "$work/build-$name" >>"$work/$name.log" 2>&1 ||
    { tail -40 "$work/$name.log"; echo "windows-deps: $name failed (log: $work/$name.log)" >&2; exit 1; }
}

# Headers only, from the host: the same versions the Linux build uses.
mkdir -p "$prefix/include/stb" "$prefix/share/cmake" "$prefix/lib/pkgconfig"
cp -r /usr/include/vulkan /usr/include/vk_video /usr/include/nlohmann "$prefix/include/"
cp -r /usr/share/cmake/nlohmann_json "$prefix/share/cmake/"
cp /usr/include/stb/stb_image.h /usr/include/stb/stb_image_write.h "$prefix/include/stb/"

build glfw "$work/src/glfw3-3.3.8" -DGLFW_BUILD_EXAMPLES=OFF -DGLFW_BUILD_TESTS=OFF -DGLFW_BUILD_DOCS=OFF
# A static GLFW needs gdi32 wherever it is linked; pkg-config's plain --libs
# (what CMake's pkg_check_modules asks) leaves Libs.private out.
sed -i 's/^Libs: \(.*\)$/Libs: \1 -lgdi32/' "$prefix/lib/pkgconfig/glfw3.pc"

build yaml-cpp "$work/src/yaml-cpp-0.7.0+dfsg" -DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=OFF \
  -DYAML_CPP_BUILD_CONTRIB=OFF -DYAML_BUILD_SHARED_LIBS=OFF
build libzip "$work/src/libzip-1.7.3" -DZLIB_LIBRARY="$zlib" -DZLIB_INCLUDE_DIR=/usr/x86_64-w64-mingw32/include \
  -DENABLE_BZIP2=OFF -DENABLE_LZMA=OFF -DENABLE_GNUTLS=OFF -DENABLE_OPENSSL=OFF -DENABLE_MBEDTLS=OFF \
  -DENABLE_COMMONCRYPTO=OFF -DBUILD_TOOLS=OFF -DBUILD_REGRESS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_DOC=OFF
build googletest /usr/src/googletest -Dgtest_disable_pthreads=OFF

# Dear ImGui has no build of its own: the library Debian's libimgui-dev
# holds (the core, the GLFW and Vulkan backends), laid out as Debian does.
mkdir -p "$work/imgui-cmake"
cat >"$work/imgui-cmake/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(imgui CXX)
set(s "$work/src/imgui-1.86+ds")
add_library(imgui STATIC \${s}/imgui.cpp \${s}/imgui_draw.cpp \${s}/imgui_tables.cpp \${s}/imgui_widgets.cpp
  \${s}/imgui_demo.cpp \${s}/backends/imgui_impl_glfw.cpp \${s}/backends/imgui_impl_vulkan.cpp)
target_include_directories(imgui PRIVATE \${s} "$prefix/include")
install(TARGETS imgui ARCHIVE DESTINATION lib)
install(FILES \${s}/imgui.h \${s}/imconfig.h \${s}/imgui_internal.h \${s}/imstb_rectpack.h \${s}/imstb_textedit.h
  \${s}/imstb_truetype.h DESTINATION include/imgui)
install(FILES \${s}/backends/imgui_impl_glfw.h \${s}/backends/imgui_impl_vulkan.h DESTINATION include/imgui/backends)
# stb's image writer and reader, compiled once as libstb-dev does.
file(WRITE \${CMAKE_BINARY_DIR}/stb.c "#define STB_IMAGE_IMPLEMENTATION\n#define STB_IMAGE_WRITE_IMPLEMENTATION\n#include <stb/stb_image.h>\n#include <stb/stb_image_write.h>\n")
enable_language(C)
add_library(stb STATIC \${CMAKE_BINARY_DIR}/stb.c)
target_include_directories(stb PRIVATE "$prefix/include")
install(TARGETS stb ARCHIVE DESTINATION lib)
CMAKE
build imgui "$work/imgui-cmake"

rm -rf "$work"
touch "$prefix/.complete"
echo "windows-deps: done in $prefix"
