// Activation names ("relu", "gelu", "tanh"): host-only, apart from the
// dispatching code, so that the model-string parser builds without Vulkan
// (scripts/fuzz.sh compiles it alone).
#include "vkamp/ops/activation.hpp"

namespace vkamp::ops {

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::ReLU: return "relu";
    case Activation::GELU: return "gelu";
    case Activation::Tanh: return "tanh";
  }
  return "?";
}

std::optional<Activation> parse_activation(std::string_view s) {
  for (Activation a : {Activation::ReLU, Activation::GELU, Activation::Tanh})
    if (s == activation_name(a)) return a;
  return std::nullopt;
}

}  // namespace vkamp::ops
