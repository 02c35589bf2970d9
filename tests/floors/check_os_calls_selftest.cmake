# The OS check itself (check_os_calls.cmake), on small trees written here:
# it passes the platform layer's own OS code, comments and member calls of
# the same names, and fails, naming file and line, on an OS macro, an
# OS-only header, an OS-only call and a path of one system elsewhere.
#   cmake -DCHECK=<check_os_calls.cmake> -DWORK=<scratch dir> -P check_os_calls_selftest.cmake
cmake_minimum_required(VERSION 3.20)

function(check name passes must_mention path text)
  set(dir "${WORK}/${name}")
  file(REMOVE_RECURSE "${dir}")
  file(WRITE "${dir}/engine/src/platform/p.cpp" "#ifdef _WIN32\n#include <windows.h>\n#else\n#include <unistd.h>\n#endif\nint id() { return getpid(); }\n")
  file(WRITE "${dir}/${path}" "${text}\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${dir} -P ${CHECK}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(out "${out}${err}")
  if(passes AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${name}: the check failed a clean tree:\n${out}")
  endif()
  if(NOT passes AND rc EQUAL 0)
    message(FATAL_ERROR "${name}: the check passed a tree that names an OS:\n${out}")
  endif()
  string(FIND "${out}" "${must_mention}" at)
  if(at LESS 0)
    message(FATAL_ERROR "${name}: the output does not mention \"${must_mention}\":\n${out}")
  endif()
endfunction()

check(clean TRUE "none names an operating system" "app/a.cpp"
  "// fsync and _WIN32 named in a comment\nint f(Table& t) { return t.access(1) + q->getpid(); }")
check(macro FALSE "app/a.cpp:2: an OS macro" "app/a.cpp" "int x;\n#if defined(_MSC_VER)\n#endif")
check(header FALSE "tests/t.cpp:1: an OS-only header" "tests/t.cpp" "#include <sys/wait.h>")
check(call FALSE "engine/src/e.cpp:1: a POSIX- or Windows-only call" "engine/src/e.cpp" "long p = ::getpid();")
check(path FALSE "samples/s.cpp:1: a path of one system" "samples/s.cpp" "const char* n = \"/dev/null\";")
