#include "tensor_names.hpp"

#include <cctype>

namespace vkamp::ui {
namespace {

bool drop_prefix(std::string& s, const std::string& prefix) {
  if (s.compare(0, prefix.size(), prefix) != 0) return false;
  s.erase(0, prefix.size());
  return true;
}

bool replace_suffix(std::string& s, const std::string& suffix, const std::string& with) {
  if (s.size() < suffix.size() || s.compare(s.size() - suffix.size(), suffix.size(), suffix) != 0) return false;
  s.replace(s.size() - suffix.size(), suffix.size(), with);
  return true;
}

}  // namespace

std::string short_tensor_name(const std::string& name) {
  std::string s = name;
  drop_prefix(s, "base_model.model.");  // PEFT's adapter files
  if (!drop_prefix(s, "model.") || s.empty()) return name;  // not a Hugging Face decoder's name
  if (drop_prefix(s, "layers.")) {
    // "N.self_attn.q_proj..." -> "N.q_proj...": the projection names the block.
    size_t digits = 0;
    while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
    if (digits == 0 || digits == s.size() || s[digits] != '.') return name;
    std::string tail = s.substr(digits + 1);
    if (!drop_prefix(tail, "self_attn.")) drop_prefix(tail, "mlp.");
    s = s.substr(0, digits + 1) + tail;
  }
  if (!replace_suffix(s, ".lora_A.weight", ".A")) replace_suffix(s, ".lora_B.weight", ".B");
  return s;
}

}  // namespace vkamp::ui
