#include "vkamp/quant/ggml_type.hpp"

#include <cctype>
#include <stdexcept>

namespace vkamp::quant {
namespace {

// ggml-common.h's block structs: values per block and sizeof(block).
constexpr GgmlTypeInfo kTypes[] = {
    {GgmlType::F32, "f32", 1, 4},
    {GgmlType::F16, "f16", 1, 2},
    {GgmlType::Q4_0, "q4_0", 32, 2 + 16},
    {GgmlType::Q4_1, "q4_1", 32, 2 + 2 + 16},
    {GgmlType::Q5_0, "q5_0", 32, 2 + 4 + 16},
    {GgmlType::Q5_1, "q5_1", 32, 2 + 2 + 4 + 16},
    {GgmlType::Q8_0, "q8_0", 32, 2 + 32},
    {GgmlType::Q4_K, "q4_k", 256, 2 + 2 + 12 + 128},
    {GgmlType::Q5_K, "q5_k", 256, 2 + 2 + 12 + 32 + 128},
    {GgmlType::Q6_K, "q6_k", 256, 128 + 64 + 16 + 2},
    {GgmlType::BF16, "bf16", 1, 2},
};

}  // namespace

std::optional<GgmlTypeInfo> ggml_type_info(uint32_t id) {
  for (const GgmlTypeInfo& t : kTypes)
    if (uint32_t(t.type) == id) return t;
  return std::nullopt;
}

const GgmlTypeInfo& ggml_type_info(GgmlType t) {
  for (const GgmlTypeInfo& info : kTypes)
    if (info.type == t) return info;
  throw std::invalid_argument("ggml type id " + std::to_string(uint32_t(t)) + " is not one vkamp reads (" +
                              ggml_type_names() + ")");
}

std::optional<GgmlType> ggml_type_from_name(std::string_view name) {
  for (const GgmlTypeInfo& t : kTypes) {
    std::string_view n = t.name;
    if (n.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < n.size() && same; ++i)
      same = std::tolower(static_cast<unsigned char>(name[i])) == n[i];
    if (same) return t.type;
  }
  return std::nullopt;
}

std::string ggml_type_names() {
  std::string s;
  for (const GgmlTypeInfo& t : kTypes) s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

bool is_quantized(GgmlType t) { return ggml_type_info(t).block_values > 1; }

uint64_t ggml_row_bytes(GgmlType t, uint64_t values) {
  const GgmlTypeInfo& info = ggml_type_info(t);
  if (values % info.block_values != 0)
    throw std::invalid_argument(std::string(info.name) + ": " + std::to_string(values) +
                                " values are not a whole number of " + std::to_string(info.block_values) +
                                "-value blocks");
  return values / info.block_values * info.block_bytes;
}

}  // namespace vkamp::quant
