# Fails when an operating system shows outside the platform layer.
#   cmake -DSOURCE_DIR=<tree> -P check_os_calls.cmake
# Every C and C++ file of the tree (build trees, which hold a
# CMakeCache.txt, and hidden folders left out) but those of
# engine/src/platform/ may name no OS macro (_WIN32, _MSC_VER, __MINGW*),
# include no POSIX- or Windows-only header, call no POSIX- or Windows-only
# function, and write no path that exists on one system alone. What such a
# file needs from the system it asks of vkamp/platform.hpp and
# vkamp/platform/. Text after // is left out, so a comment may name them.
cmake_minimum_required(VERSION 3.20)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<tree> -P check_os_calls.cmake")
endif()
cmake_path(SET root NORMALIZE "${SOURCE_DIR}/")
set(platform_dir "engine/src/platform/")

# What is refused, as regular expressions on a line, each with the words
# the message uses for it.
set(before "(^|[^A-Za-z0-9_.>:]|[^A-Za-z0-9_]::)")  # a call, maybe ::qualified, not a member
set(rules
  "(^|[^A-Za-z0-9_])(_WIN32|_WIN64|_MSC_VER|__MINGW32__|__MINGW64__|__linux__|__APPLE__)([^A-Za-z0-9_]|$)|an OS macro"
  "#[ \t]*include[ \t]*<(unistd|fcntl|dlfcn|poll|pwd|termios|windows|io|direct|process|winsock2|wchar_t)\\.h>|an OS-only header"
  "#[ \t]*include[ \t]*<sys/[a-z_]+\\.h>|an OS-only header"
  "${before}(setenv|unsetenv|putenv|_putenv_s|_wputenv_s|getuid|geteuid|getpid|mkdtemp|mkstemp|fsync|popen|pclose|isatty|_isatty|fork|execvp|execv|waitpid|dlopen|dlsym|access|_waccess|_wfopen|_wopen|LoadLibraryA|LoadLibraryW|GetProcAddress)[ \t]*\\(|a POSIX- or Windows-only call"
  "(^|[^A-Za-z0-9_])(O_CLOEXEC|O_DIRECTORY|O_BINARY|_O_BINARY|STDERR_FILENO|STDOUT_FILENO|M_PI)([^A-Za-z0-9_]|$)|a POSIX- or Windows-only constant"
  "\"(/dev/null|/usr/bin/python3|/tmp|/proc|NUL)[\"/]|a path of one system")

file(GLOB tops RELATIVE "${root}" "${root}*")
set(files "")
foreach(top IN LISTS tops)
  if(top MATCHES "^\\." OR NOT IS_DIRECTORY "${root}${top}" OR EXISTS "${root}${top}/CMakeCache.txt")
    continue()
  endif()
  file(GLOB_RECURSE found RELATIVE "${root}" "${root}${top}/*.h" "${root}${top}/*.hpp" "${root}${top}/*.c"
    "${root}${top}/*.cpp" "${root}${top}/*.cc" "${root}${top}/*.inl")
  list(APPEND files ${found})
endforeach()

set(problems "")
set(checked 0)
foreach(rel IN LISTS files)
  string(FIND "${rel}" "${platform_dir}" at)
  if(at EQUAL 0)
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  file(STRINGS "${root}${rel}" lines)
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    string(REGEX REPLACE "//.*$" "" code "${line}")
    foreach(rule IN LISTS rules)
      string(REGEX MATCH "^(.*)\\|([^|]*)$" _ "${rule}")
      set(pattern "${CMAKE_MATCH_1}")
      set(what "${CMAKE_MATCH_2}")
      if(code MATCHES "${pattern}")
        string(STRIP "${line}" shown)
        list(APPEND problems "${rel}:${n}: ${what} outside ${platform_dir}: ${shown}")
      endif()
    endforeach()
  endforeach()
endforeach()

if(problems)
  list(JOIN problems "\n" text)
  message(FATAL_ERROR "${text}\n(ask vkamp/platform.hpp or vkamp/platform/ for it)")
endif()
message(STATUS "${checked} files: none names an operating system outside ${platform_dir}")
