#include "vkamp/shader_registry.hpp"

namespace vkamp {

const ShaderCode* find_shader(std::string_view name) {
  for (const ShaderCode* s : all_shaders())
    if (name == s->name) return s;
  return nullptr;
}

}  // namespace vkamp
