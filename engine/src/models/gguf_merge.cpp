#include "vkamp/models/gguf_merge.hpp"

#include <cstring>
#include <map>
#include <stdexcept>

#include "vkamp/config_error.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/io/gguf_writer.hpp"
#include "vkamp/models/gguf_adapter.hpp"
#include "vkamp/models/gguf_model.hpp"
#include "vkamp/models/peft_adapter.hpp"
#include "vkamp/platform/files.hpp"
#include "vkamp/quant/dequantize.hpp"
#include "vkamp/quant/quantize.hpp"

namespace vkamp::models {
namespace {

constexpr uint32_t kFileTypeF16 = 1;  // llama_ftype LLAMA_FTYPE_MOSTLY_F16

// The adapters of each adapted weight, by the weight's GGUF name.
struct Adapted {
  std::string a, b;
  uint32_t heads = 0;  // a llama base's q or k: B's rows permuted for these heads
};

std::map<std::string, Adapted> adapted_weights(const io::GgufFile& base, const graph::Graph& g) {
  const LlamaConfig c = read_gguf_config(base);
  std::map<std::string, Adapted> out;
  for (int i : g.param_indices()) {
    const std::string& name = g.tensors()[i].name;
    const size_t at = name.find(".lora_A.weight");
    if (at == std::string::npos) continue;
    const std::string weight = name.substr(0, at) + ".weight";
    const std::string file_name = gguf_tensor_name(weight).value_or(weight);
    if (!base.find_tensor(file_name))
      throw ConfigError(base.path() + ": the adapter " + name + " adapts " + file_name + ", which the file lacks");
    Adapted& a = out[file_name];
    a.a = name;
    a.b = name.substr(0, at) + ".lora_B.weight";
    a.heads = gguf_rotary_heads(weight, c);
  }
  return out;
}

// The merged file's type of tensor t.
quant::GgmlType merged_type(const io::GgufTensor& t, MergedTypes types) {
  if (types == MergedTypes::Base) return t.type;
  return t.dims.size() >= 2 ? quant::GgmlType::F16 : quant::GgmlType::F32;
}

// w in `type`'s bytes, rows of `row` values: F32 as it is, F16 and BF16
// rounded to nearest even, blocks by ggml's reference quantizers.
std::vector<uint8_t> encoded(quant::GgmlType type, const std::vector<float>& w, uint64_t row, const std::string& name) {
  std::vector<uint8_t> bytes(quant::ggml_row_bytes(type, row) * (w.size() / row));
  if (type == quant::GgmlType::F32) {
    std::memcpy(bytes.data(), w.data(), bytes.size());
  } else if (type == quant::GgmlType::F16 || type == quant::GgmlType::BF16) {
    for (size_t i = 0; i < w.size(); ++i) {
      const uint16_t h = type == quant::GgmlType::F16 ? f32_to_fp16(w[i]) : f32_to_bf16(w[i]);
      std::memcpy(&bytes[2 * i], &h, 2);
    }
  } else {
    try {
      quant::quantize_rows_in_parallel(type, w.data(), bytes.data(), w.size());
    } catch (const std::invalid_argument& e) {
      throw ConfigError("merging into " + name + ": " + e.what());
    }
  }
  return bytes;
}

// One tensor of the merged file: the base's values (W + alpha/r B A where
// adapted) in merged_type.
std::vector<uint8_t> merged_bytes(const io::GgufTensor& t, const Adapted* ad, MergedTypes types,
                                  const std::function<std::vector<float>(const std::string&)>& values,
                                  const LoraConfig& lora) {
  const quant::GgmlType type = merged_type(t, types);
  if (!ad && type == t.type) return std::vector<uint8_t>(t.data, t.data + t.bytes);  // as it was
  const uint64_t row = t.dims[0], rows = t.elements() / row, row_bytes = quant::ggml_row_bytes(t.type, row);
  std::vector<float> w(t.elements());
  for (uint64_t r = 0; r < rows; ++r) quant::dequantize_row(t.type, t.data + r * row_bytes, w.data() + r * row, row);
  if (ad) fold_adapter(w, values(ad->a), gguf_adapter_rows(values(ad->b), uint32_t(rows), ad->heads), lora);
  return encoded(type, w, row, t.name);
}

}  // namespace

void write_merged_gguf(const std::string& path, const io::GgufFile& base, const graph::Graph& g, const LoraConfig& lora,
                       const std::function<std::vector<float>(const std::string& name)>& values, MergedTypes types) {
  const std::map<std::string, Adapted> adapted = adapted_weights(base, g);
  io::GgufMetadata meta;
  for (const auto& [key, v] : base.metadata()) {
    if (types == MergedTypes::Base) {
      meta.emplace_back(key, v);
      continue;
    }
    if (key.rfind("quantize.", 0) == 0) continue;  // the quantizer's record (imatrix...) no longer applies
    meta.emplace_back(key, key == "general.file_type" ? io::gguf_u32(kFileTypeF16) : v);
  }
  if (types == MergedTypes::F16 && !base.find("general.file_type"))
    meta.emplace_back("general.file_type", io::gguf_u32(kFileTypeF16));
  std::vector<io::GgufTensorOut> tensors;
  for (const io::GgufTensor& t : base.tensors()) {
    const auto it = adapted.find(t.name);
    const Adapted* ad = it == adapted.end() ? nullptr : &it->second;
    tensors.push_back({t.name, t.dims, merged_type(t, types),
                       [&t, ad, types, &values, &lora] { return merged_bytes(t, ad, types, values, lora); }});
  }
  try {
    io::write_gguf(path, meta, tensors);
  } catch (const platform::FileError& e) {
    throw ConfigError(e.what());
  }
}

}  // namespace vkamp::models
