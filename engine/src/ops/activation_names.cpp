// Activation names and model-string letters (gpu_abi/activation_list.h):
// host-only, apart from the dispatching code, so that the model-string
// parser builds without Vulkan.
#include "vkamp/ops/activation.hpp"

namespace vkamp::ops {

namespace {
struct Entry {
  Activation act;
  const char* name;
  char letter;
};
constexpr Entry kEntries[] = {
#define VKAMP_ACTIVATION_ENTRY(Enumerator, SHADER_NAME, code, name, letter) {Activation::Enumerator, #name, letter},
    VKAMP_ACTIVATIONS(VKAMP_ACTIVATION_ENTRY)
#undef VKAMP_ACTIVATION_ENTRY
};

const Entry* find(Activation a) {
  for (const Entry& e : kEntries)
    if (e.act == a) return &e;
  return nullptr;
}
}  // namespace

const char* activation_name(Activation a) {
  const Entry* e = find(a);
  return e ? e->name : "?";
}

char activation_letter(Activation a) {
  const Entry* e = find(a);
  return e ? e->letter : '?';
}

std::optional<Activation> parse_activation(std::string_view s) {
  for (const Entry& e : kEntries)
    if (s == e.name) return e.act;
  return std::nullopt;
}

std::optional<Activation> parse_activation_letter(char c) {
  for (const Entry& e : kEntries)
    if (c == e.letter) return e.act;
  return std::nullopt;
}

std::string activation_names_text() {
  std::string s;
  for (const Entry& e : kEntries) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

std::string activation_letters_text() {
  std::string s;
  for (const Entry& e : kEntries) s += (s.empty() ? "" : ", ") + std::string(1, e.letter) + " (" + e.name + ")";
  return s;
}

}  // namespace vkamp::ops
