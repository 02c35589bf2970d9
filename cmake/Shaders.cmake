# Compiles GLSL compute shaders to SPIR-V, validates them with spirv-val and
# embeds them in the object library vkamp_shaders, whose objects go into
# libvkamp itself: no binary, installed or not, reads .spv files at run time.
#
# One GLSL source serves every storage format (ncnn's sfp/afp idea): the build
# compiles it once per format with a VKAMP_<FORMAT> define, and
# shaders/common/types.glsl turns that define into the storage and arithmetic
# types. Each variant is its own glslang run, so editing one shader
# recompiles only its variants (and a shared include only its users, through
# glslang's depfile); one generated source then embeds every module.

set(VKAMP_SHADER_DIR ${CMAKE_CURRENT_LIST_DIR}/../shaders)
set_property(GLOBAL PROPERTY VKAMP_SHADER_EMBEDS "")  # "<id>|<key>|<header>" per module
set(VKAMP_EMBED_SPIRV ${CMAKE_CURRENT_LIST_DIR}/EmbedSpirv.cmake)
set_property(GLOBAL PROPERTY VKAMP_KHR_BUILDS "")  # "<coopmat .spv>|<khr .spv>" pairs, for the tests

# vkamp_shader(<name> [FORMATS fp32 fp16 fp16s bf16 cb16] [SUBGROUP] [TEXEL] [COOPMAT] [QUANT])
# QUANT also builds "<key>.quant" with VKAMP_GEMM_QUANT: a weight operand in
# ggml blocks (a quantized frozen base), dequantized as it is loaded.
# Without FORMATS the shader is compiled once, as "<name>". (The
# SignedZeroInfNanPreserve execution mode is not a build: Kernel adds it to
# the module where the device offers it, engine/src/spirv_float_controls.cpp.)
# SUBGROUP also builds
# "<key>.subgroup" with VKAMP_GEMM_SUBGROUP, for code that needs subgroup
# ballot (which not every device has). TEXEL also builds "<key>.texel" with
# VKAMP_GEMM_TEXEL, which reads the GEMM's operands through uniform texel
# buffers (a CPU driver gathers those with vector code). COOPMAT also builds
# "<key>.coopmat" with VKAMP_COOPMAT: cooperative matrices (tensor cores),
# for the devices that offer them, through VK_NV_cooperative_matrix; and
# from it "<key>.khr", the same module through VK_KHR_cooperative_matrix.
function(vkamp_shader name)
  cmake_parse_arguments(ARG "SUBGROUP;TEXEL;COOPMAT;QUANT" "" "FORMATS" ${ARGN})
  set(src ${VKAMP_SHADER_DIR}/${name}.comp)
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/spv)
  file(MAKE_DIRECTORY ${out_dir})
  if(NOT ARG_FORMATS)
    set(ARG_FORMATS "-")
  endif()
  set(modes plain)
  if(ARG_SUBGROUP)
    list(APPEND modes subgroup)
  endif()
  if(ARG_TEXEL)
    list(APPEND modes texel)
  endif()
  if(ARG_COOPMAT)
    list(APPEND modes coopmat)
  endif()
  if(ARG_QUANT)
    list(APPEND modes quant)
  endif()
  foreach(fmt IN LISTS ARG_FORMATS)
  foreach(mode IN LISTS modes)
    if(fmt STREQUAL "-")
      set(id ${name})
      set(key ${name})
      set(defs "")
    else()
      set(id ${name}_${fmt})
      set(key ${name}.${fmt})
      string(TOUPPER ${fmt} FMT)
      set(defs -DVKAMP_${FMT}=1)
    endif()
    if(mode STREQUAL "subgroup")
      set(id ${id}_subgroup)
      set(key ${key}.subgroup)
      list(APPEND defs -DVKAMP_GEMM_SUBGROUP=1)
    elseif(mode STREQUAL "texel")
      set(id ${id}_texel)
      set(key ${key}.texel)
      list(APPEND defs -DVKAMP_GEMM_TEXEL=1)
    elseif(mode STREQUAL "quant")
      set(id ${id}_quant)
      set(key ${key}.quant)
      list(APPEND defs -DVKAMP_GEMM_QUANT=1)
    elseif(mode STREQUAL "coopmat")
      set(id ${id}_coopmat)
      set(key ${key}.coopmat)
      list(APPEND defs -DVKAMP_COOPMAT=1)
    endif()
    set(spv ${out_dir}/${id}.spv)
    set(hdr ${out_dir}/${id}.h)
    # engine/include: vkamp/gpu_abi/, the definitions the shaders share with
    # the host (push constants, step codes, the GPU-resident state).
    set(flags --target-env vulkan1.1 -I${VKAMP_SHADER_DIR}/common -I${VKAMP_SHADER_DIR}/../engine/include ${defs})
    # The .spv is the rule's first output: glslang's depfile names it, and
    # ninja wants the depfile to name the rule's first output.
    add_custom_command(
      OUTPUT ${spv} ${hdr}
      COMMAND ${GLSLANG_VALIDATOR} ${flags} --quiet --depfile ${out_dir}/${id}.d -o ${spv} ${src}
      COMMAND ${SPIRV_VAL} --target-env vulkan1.1 ${spv}
      COMMAND ${CMAKE_COMMAND} -D SPV=${spv} -D OUT=${hdr} -D NAME=vkamp_spv_${id} -P ${VKAMP_EMBED_SPIRV}
      DEPENDS ${src} ${VKAMP_EMBED_SPIRV}
      DEPFILE ${out_dir}/${id}.d
      COMMENT "glslang ${key}"
      VERBATIM)
    vkamp_embed_shader(${id} ${key} ${hdr})
    if(mode STREQUAL "coopmat")
      # The same module for SPV_KHR_cooperative_matrix (AMD, Intel, and
      # NVIDIA too): "<key>.khr", written from the .coopmat SPIR-V by
      # tools/spirv_khr, since glslang 12 cannot compile GL_KHR_cooperative_matrix.
      # spirv-val 2023.1 does not know the KHR capability; the tool checks
      # the module's structure itself.
      string(REGEX REPLACE "_coopmat$" "_khr" khr_id ${id})
      string(REGEX REPLACE "[.]coopmat$" ".khr" khr_key ${key})
      set(khr_spv ${out_dir}/${khr_id}.spv)
      set(khr_hdr ${out_dir}/${khr_id}.h)
      add_custom_command(
        OUTPUT ${khr_spv} ${khr_hdr}
        COMMAND ${VKAMP_SPIRV_KHR_COMMAND} ${spv} ${khr_spv}
        COMMAND ${CMAKE_COMMAND} -D SPV=${khr_spv} -D OUT=${khr_hdr} -D NAME=vkamp_spv_${khr_id} -P ${VKAMP_EMBED_SPIRV}
        DEPENDS ${spv} ${VKAMP_SPIRV_KHR_COMMAND} ${VKAMP_EMBED_SPIRV}
        COMMENT "spirv-khr ${khr_key}"
        VERBATIM)
      vkamp_embed_shader(${khr_id} ${khr_key} ${khr_hdr})
      set_property(GLOBAL APPEND PROPERTY VKAMP_KHR_BUILDS "${spv}|${khr_spv}")
    endif()
  endforeach()
  endforeach()
endfunction()

# Puts header `hdr` (the array vkamp_spv_<id>) into the shader table as `key`.
function(vkamp_embed_shader id key hdr)
  set_property(GLOBAL APPEND PROPERTY VKAMP_SHADER_EMBEDS "${id}|${key}|${hdr}")
endfunction()

# Builds vkamp_shaders from every vkamp_shader() call made before it.
# An object library, not a static one, so the installed package is one
# archive (libvkamp.a) with nothing else to export.
function(vkamp_shader_library)
  get_property(embeds GLOBAL PROPERTY VKAMP_SHADER_EMBEDS)
  set(includes "")
  set(rows "")
  set(pointers "")
  set(headers "")
  set(index 0)
  foreach(embed IN LISTS embeds)
    string(REPLACE "|" ";" parts "${embed}")
    list(GET parts 0 id)
    list(GET parts 1 key)
    list(GET parts 2 hdr)
    list(APPEND headers ${hdr})
    string(APPEND includes "#include \"${id}.h\"\n")
    string(APPEND rows "    {\"${key}\", vkamp_spv_${id}, std::size(vkamp_spv_${id})},\n")
    string(APPEND pointers "    &kCode[${index}],\n")
    math(EXPR index "${index} + 1")
  endforeach()
  # One source for every module: each shader's own source (about 215) paid
  # the compiler's start and the registry header's parse, 0.16 of its 0.2 s.
  set(registry ${CMAKE_CURRENT_BINARY_DIR}/spv/registry.cpp)
  file(CONFIGURE OUTPUT ${registry} CONTENT
"// generated by cmake/Shaders.cmake: the table of every embedded shader
#include <cstdint>
#include <iterator>
#include \"vkamp/shader_registry.hpp\"
namespace vkamp::spv {
namespace {
${includes}}
const ShaderCode kCode[] = {
${rows}};
const ShaderCode* const kAll[] = {
${pointers}};
}
namespace vkamp {
std::span<const ShaderCode* const> all_shaders() { return spv::kAll; }
}
" @ONLY)
  add_library(vkamp_shaders OBJECT ${registry} ${headers})
  target_include_directories(vkamp_shaders PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/spv
                             ${PROJECT_SOURCE_DIR}/engine/include)
endfunction()
