// GGUF v3 files written (ggml's docs/gguf.md; io/gguf.hpp reads them): the
// metadata in the order given, the tensor directory, and each tensor's
// bytes at an offset aligned to general.alignment (32 unless the metadata
// says otherwise), padded with zeros. The file is replaced atomically
// (platform::ReplacingFile): a run cut off leaves the old one, never a part.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "vkamp/io/gguf.hpp"

namespace vkamp::io {

struct GgufTensorOut {
  std::string name;
  std::vector<uint64_t> dims;  // fastest first
  quant::GgmlType type = quant::GgmlType::F32;
  // The tensor's bytes (ggml_row_bytes(type, dims[0]) per row), asked for
  // when the writer reaches it, so one tensor at a time is in memory.
  std::function<std::vector<uint8_t>()> bytes;
};

using GgufMetadata = std::vector<std::pair<std::string, GgufValue>>;

GgufValue gguf_string(const std::string& s);
GgufValue gguf_u32(uint32_t v);
GgufValue gguf_f32(float v);

// Throws FormatError naming the file (and the tensor whose bytes do not fit
// its dims, or a value that is not writable) or FileError.
void write_gguf(const std::string& path, const GgufMetadata& metadata, const std::vector<GgufTensorOut>& tensors);

}  // namespace vkamp::io
