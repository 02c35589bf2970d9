#include "vkamp/quant/ggml_type.hpp"

#include <cctype>
#include <stdexcept>

namespace vkamp::quant {
namespace {

// ggml-common.h's block sizes: QK4_0 = QK4_1 = QK5_0 = QK5_1 = QK8_0 = 32,
// QK_K = 256; bytes are sizeof(block_*).
constexpr GgmlTypeInfo kTypes[] = {
    {GgmlType::F32, "f32", 1, 4},      {GgmlType::F16, "f16", 1, 2},      {GgmlType::BF16, "bf16", 1, 2},
    {GgmlType::Q8_0, "q8_0", 32, 34},  {GgmlType::Q4_0, "q4_0", 32, 18},  {GgmlType::Q4_1, "q4_1", 32, 20},
    {GgmlType::Q5_0, "q5_0", 32, 22},  {GgmlType::Q5_1, "q5_1", 32, 24},  {GgmlType::Q4_K, "q4_k", 256, 144},
    {GgmlType::Q5_K, "q5_k", 256, 176}, {GgmlType::Q6_K, "q6_k", 256, 210},
};

}  // namespace

std::optional<GgmlTypeInfo> ggml_type_info(uint32_t id) {
  for (const GgmlTypeInfo& t : kTypes)
    if (uint32_t(t.type) == id) return t;
  return std::nullopt;
}

const GgmlTypeInfo& ggml_type_info(GgmlType type) {
  for (const GgmlTypeInfo& t : kTypes)
    if (t.type == type) return t;
  throw std::logic_error("ggml type " + std::to_string(uint32_t(type)) + " is not in the table");
}

std::optional<GgmlType> ggml_type_from_name(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (const GgmlTypeInfo& t : kTypes)
    if (lower == t.name) return t.type;
  return std::nullopt;
}

std::string ggml_type_names() {
  std::string out;
  for (const GgmlTypeInfo& t : kTypes) out += (out.empty() ? "" : ", ") + std::string(t.name);
  return out;
}

bool is_quantized(GgmlType t) { return ggml_type_info(t).block_values > 1; }

uint64_t ggml_row_bytes(GgmlType t, uint64_t values) {
  const GgmlTypeInfo& info = ggml_type_info(t);
  return values / info.block_values * info.block_bytes;
}

}  // namespace vkamp::quant
