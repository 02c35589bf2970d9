# Ops registered by name (ops.cmake holds one vkamp_add_op() line per op).
#
# vkamp_add_op(<name> [SHADERS <shader>[:<build>]...] [FORMATS <fmt>...] [GRAPH <graph op>...])
#
# finds the op's files by its name and wires each one it finds:
#   shaders/<shader>.comp          compiled per storage format (vkamp_shader,
#                                  cmake/Shaders.cmake); SHADERS defaults to
#                                  <name> when shaders/<name>.comp exists
#   engine/src/ops/<name>.cpp      the kernel (ops::), into libvkamp
#   engine/src/graph/ops/<name>.cpp  the graph definition: each GRAPH name g
#                                  (default <name>) is an `OpDef g_op()` it
#                                  defines, listed in the generated op registry
#   tests/shaders/test_<name>.cpp  the shader tests, into test_shaders
# A shader's interface header (engine/include/vkamp/gpu_abi/<shader>.h)
# needs no line: the interface test checks every header there that declares
# a shader handle.
#
# FORMATS: the storage formats its shaders are built for (default: every
# one, VKAMP_ALL_FORMATS). A shader's :<build> suffixes, any of
#   :once     built once, not per format (a shader on fp32 state only)
#   :subgroup :texel :coopmat :quant   the extra builds vkamp_shader() describes
# e.g. SHADERS gemm:subgroup:texel gemm_reduce.
# An op none of whose files exist, or a named shader without its .comp, is a
# configure error (a misspelt name is not silently an empty op).
set(VKAMP_ALL_FORMATS fp32 fp16 fp16s bf16 cb16)
set(VKAMP_ROOT_DIR ${CMAKE_CURRENT_LIST_DIR}/..)
foreach(p VKAMP_OP_SHADERS VKAMP_OP_KERNELS VKAMP_OP_GRAPHS VKAMP_OP_DEFS VKAMP_OP_TESTS)
  set_property(GLOBAL PROPERTY ${p} "")
endforeach()

function(vkamp_add_op name)
  cmake_parse_arguments(ARG "" "" "SHADERS;FORMATS;GRAPH" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "vkamp_add_op(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  set(root ${VKAMP_ROOT_DIR})
  set(found FALSE)
  if(NOT ARG_SHADERS AND EXISTS ${root}/shaders/${name}.comp)
    set(ARG_SHADERS ${name})
  endif()
  if(NOT ARG_FORMATS)
    set(ARG_FORMATS ${VKAMP_ALL_FORMATS})
  endif()
  foreach(item IN LISTS ARG_SHADERS)
    # "gemm:subgroup:texel" -> shader gemm, builds subgroup texel; stored as
    # "<shader>|<formats or ->|<builds>" for vkamp_op_shaders().
    string(REPLACE ":" ";" parts ${item})
    list(POP_FRONT parts shader)
    if(NOT EXISTS ${root}/shaders/${shader}.comp)
      message(FATAL_ERROR "vkamp_add_op(${name}): shaders/${shader}.comp does not exist")
    endif()
    set(formats ${ARG_FORMATS})
    set(builds "")
    foreach(b IN LISTS parts)
      if(b STREQUAL "once")
        set(formats "-")
      elseif(b MATCHES "^(subgroup|texel|coopmat|quant)$")
        string(TOUPPER ${b} B)
        list(APPEND builds ${B})
      else()
        message(FATAL_ERROR "vkamp_add_op(${name}): unknown build ':${b}' of ${shader}")
      endif()
    endforeach()
    string(REPLACE ";" "," formats "${formats}")
    string(REPLACE ";" "," builds "${builds}")
    set_property(GLOBAL APPEND PROPERTY VKAMP_OP_SHADERS "${shader}|${formats}|${builds}")
    set(found TRUE)
  endforeach()
  if(EXISTS ${root}/engine/src/ops/${name}.cpp)
    set_property(GLOBAL APPEND PROPERTY VKAMP_OP_KERNELS src/ops/${name}.cpp)
    set(found TRUE)
  endif()
  if(EXISTS ${root}/engine/src/graph/ops/${name}.cpp)
    set_property(GLOBAL APPEND PROPERTY VKAMP_OP_GRAPHS src/graph/ops/${name}.cpp)
    if(NOT ARG_GRAPH)
      set(ARG_GRAPH ${name})
    endif()
    set_property(GLOBAL APPEND PROPERTY VKAMP_OP_DEFS ${ARG_GRAPH})
    set(found TRUE)
  elseif(ARG_GRAPH)
    message(FATAL_ERROR "vkamp_add_op(${name}): GRAPH given, but engine/src/graph/ops/${name}.cpp does not exist")
  endif()
  if(EXISTS ${root}/tests/shaders/test_${name}.cpp)
    set_property(GLOBAL APPEND PROPERTY VKAMP_OP_TESTS shaders/test_${name}.cpp)
  endif()
  if(NOT found)
    message(FATAL_ERROR "vkamp_add_op(${name}): no shaders/${name}.comp, engine/src/ops/${name}.cpp "
                        "or engine/src/graph/ops/${name}.cpp")
  endif()
endfunction()

# In shaders/CMakeLists.txt: compiles every op's shaders.
function(vkamp_op_shaders)
  get_property(entries GLOBAL PROPERTY VKAMP_OP_SHADERS)
  foreach(e IN LISTS entries)
    string(REPLACE "|" ";" fields "${e}")
    list(GET fields 0 shader)
    list(GET fields 1 formats)
    list(GET fields 2 builds)
    string(REPLACE "," ";" builds "${builds}")
    if(formats STREQUAL "-")
      vkamp_shader(${shader} ${builds})
    else()
      string(REPLACE "," ";" formats "${formats}")
      vkamp_shader(${shader} FORMATS ${formats} ${builds})
    endif()
  endforeach()
endfunction()

# In engine/CMakeLists.txt: adds every op's kernel and graph definition to
# `target`, and the op registry's list (op_list.inc, one VKAMP_OP(g) per
# graph op, in ops.cmake's order) that engine/src/graph/op_registry.cpp reads.
function(vkamp_op_sources target)
  get_property(kernels GLOBAL PROPERTY VKAMP_OP_KERNELS)
  get_property(graphs GLOBAL PROPERTY VKAMP_OP_GRAPHS)
  get_property(defs GLOBAL PROPERTY VKAMP_OP_DEFS)
  target_sources(${target} PRIVATE ${kernels} ${graphs})
  set(rows "")
  foreach(d IN LISTS defs)
    string(APPEND rows "VKAMP_OP(${d})\n")
  endforeach()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/generated)
  file(CONFIGURE OUTPUT ${dir}/op_list.inc CONTENT
"// generated by cmake/Ops.cmake from ops.cmake: every graph op, in order
${rows}" @ONLY)
  # On the registry's file alone: an include path on the whole target would
  # change every other file's command line (and miss the shared ccache).
  set_source_files_properties(src/graph/op_registry.cpp PROPERTIES INCLUDE_DIRECTORIES ${dir})
endfunction()
