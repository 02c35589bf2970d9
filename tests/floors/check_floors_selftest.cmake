# The floor check itself: on small trees written here, it passes a tree
# whose includes only go down and fails, naming the file, on one include
# that runs up, on an include beside the file that runs up, on a floor
# declared before what it includes, and on a file on no floor.
#   cmake -DCHECK=<check_floors.cmake> -DWORK=<scratch dir> -P check_floors_selftest.cmake
cmake_minimum_required(VERSION 3.20)

set(floors_txt "low:  low/\nmid:  mid/ | low\nhigh: high/ | mid low\nroots: .\n")

# Writes a tree into WORK/<name> (files as path;content pairs) and runs
# the check on it; sets <name>_rc and <name>_out.
function(tree name floors)
  set(dir "${WORK}/${name}")
  file(REMOVE_RECURSE "${dir}")
  file(WRITE "${dir}/floors.txt" "${floors}")
  set(files ${ARGN})
  while(files)
    list(POP_FRONT files path text)
    file(WRITE "${dir}/${path}" "${text}\n")
  endwhile()
  execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${dir} -P ${CHECK}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${name}_rc "${rc}" PARENT_SCOPE)
  set(${name}_out "${out}${err}" PARENT_SCOPE)
endfunction()

function(expect name passes must_mention)
  if(passes AND NOT ${name}_rc EQUAL 0)
    message(FATAL_ERROR "${name}: the check failed a tree that keeps the floors:\n${${name}_out}")
  endif()
  if(NOT passes AND ${name}_rc EQUAL 0)
    message(FATAL_ERROR "${name}: the check passed a tree that breaks the floors:\n${${name}_out}")
  endif()
  string(FIND "${${name}_out}" "${must_mention}" at)
  if(at LESS 0)
    message(FATAL_ERROR "${name}: the output does not mention \"${must_mention}\":\n${${name}_out}")
  endif()
endfunction()

set(low_h "low/base.hpp;#pragma once")
set(mid_h "mid/mid.hpp;#include \"low/base.hpp\"")
set(glsl  "low/k.comp;#version 450\n#include \"mid/mid.hpp\"")

tree(down "${floors_txt}" ${low_h} ${mid_h} "high/app.cpp;#include \"mid/mid.hpp\"\n#include <low/base.hpp>")
expect(down TRUE "none runs up a floor")

tree(up "${floors_txt}" ${low_h} ${mid_h} "low/bad.cpp;  #  include <high/top.hpp>" "high/top.hpp;#pragma once")
expect(up FALSE "low/bad.cpp (floor low): #include <high/top.hpp> reaches high/top.hpp, floor high")

tree(up_glsl "${floors_txt}" ${low_h} ${mid_h} ${glsl})
expect(up_glsl FALSE "low/k.comp (floor low): #include \"mid/mid.hpp\"")

# "../" beside the file, as the engine's private headers are included.
tree(up_relative "${floors_txt}" ${low_h} ${mid_h} "low/sub/x.cpp;#include \"../../mid/mid.hpp\"")
expect(up_relative FALSE "low/sub/x.cpp (floor low)")

tree(not_an_order "low: low/ | mid\nmid: mid/ | low\nroots: .\n" ${low_h} ${mid_h})
expect(not_an_order FALSE "floor low may include \"mid\", which is not a floor declared above it")

tree(stray "${floors_txt}" ${low_h} ${mid_h} "elsewhere/y.cpp;#include \"low/base.hpp\"")
expect(stray FALSE "elsewhere/y.cpp: on no floor")

message(STATUS "the floor check passes a downward tree and catches each upward include")
