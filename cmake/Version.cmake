# Writes OUT, the definitions of app/version.hpp: VERSION (the project's)
# and `git describe` of SOURCE_DIR where it is a git checkout. Run at every
# build; the file is rewritten only when its text changes, so an unchanged
# version recompiles nothing.
#   cmake -DSOURCE_DIR=... -DVERSION=... -DOUT=... -P Version.cmake
set(describe "")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} describe --tags --always --dirty
    OUTPUT_VARIABLE describe OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0)
    set(describe "")
  endif()
endif()
set(text "// Written by cmake/Version.cmake at build time.\n#include \"app/version.hpp\"\n\nnamespace vkamp::app {\n\nconst char kVersion[] = \"${VERSION}\";\nconst char kGitDescribe[] = \"${describe}\";\n\n}  // namespace vkamp::app\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
