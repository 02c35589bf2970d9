# Cross-compiling vkamp for 64-bit Windows with Debian's MinGW-w64 (GCC 12,
# posix threads), its programs run under Wine: scripts/build-windows.sh
# passes this file with VKAMP_MINGW_PREFIX, the folder of the dependencies
# it built from Debian's source packages (scripts/windows-deps.sh).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)

# Try-compiles read this file again: the prefix travels through the environment too.
if(NOT VKAMP_MINGW_PREFIX AND DEFINED ENV{VKAMP_MINGW_PREFIX})
  set(VKAMP_MINGW_PREFIX $ENV{VKAMP_MINGW_PREFIX})
endif()
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32 ${VKAMP_MINGW_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)  # glslang, spirv-val: the build machine's
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Everything static, the C++ and GCC runtimes and winpthread too: a program
# needs no MinGW DLL beside it, only Windows' own and the GPU driver's.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")

# Tests and build steps that run a program of this build run it under Wine.
set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/../scripts/wine-run.sh)
