// The SPIR-V embedded at build time (cmake/Shaders.cmake), looked up by
// "<shader>" or "<shader>.<format>", e.g. "gemm.fp16".
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace vkamp {

struct ShaderCode {
  const char* name;
  const uint32_t* words;
  size_t word_count;
};

std::span<const ShaderCode* const> all_shaders();

// nullptr when no shader has that name.
const ShaderCode* find_shader(std::string_view name);

}  // namespace vkamp
