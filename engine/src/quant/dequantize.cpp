// Placeholder until the quantized formats land: the float types only.
#include "vkamp/quant/dequantize.hpp"

#include <cstring>
#include <stdexcept>

#include "vkamp/float_formats.hpp"

namespace vkamp::quant {

void dequantize_row(GgmlType t, const uint8_t* b, float* out, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    if (t == GgmlType::F32) {
      std::memcpy(out + i, b + 4 * i, 4);
    } else if (t == GgmlType::F16 || t == GgmlType::BF16) {
      uint16_t h;
      std::memcpy(&h, b + 2 * i, 2);
      out[i] = t == GgmlType::F16 ? fp16_to_f32(h) : bf16_to_f32(h);
    } else {
      throw std::runtime_error(std::string("dequantizing ") + ggml_type_info(t).name + " is not written yet");
    }
  }
}

}  // namespace vkamp::quant
