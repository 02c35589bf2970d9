// ggml's tensor types as GGUF files store them (ggml/src/ggml-common.h):
// the ids, how many values a block holds and how many bytes it takes. A
// quantized tensor is a sequence of blocks along its fastest dimension
// (a row of a weight); each row starts a new block.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vkamp::quant {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  BF16 = 30,
};

struct GgmlTypeInfo {
  GgmlType type;
  const char* name;  // llama.cpp's lower-case name: "q4_k", "f16"
  uint32_t block_values;
  uint32_t block_bytes;
};

// Nullopt for a type vkamp does not read (the id is in the message).
std::optional<GgmlTypeInfo> ggml_type_info(uint32_t id);
const GgmlTypeInfo& ggml_type_info(GgmlType t);
// "q4_k", "Q4_K" or "q4_K"; nullopt for another name.
std::optional<GgmlType> ggml_type_from_name(std::string_view name);
// Every type vkamp reads, comma-separated, for messages and --help.
std::string ggml_type_names();
// Whether the type is stored in blocks with scales (not F32, F16, BF16).
bool is_quantized(GgmlType t);
// Bytes of `values` values (a multiple of the block's values).
uint64_t ggml_row_bytes(GgmlType t, uint64_t values);

}  // namespace vkamp::quant
