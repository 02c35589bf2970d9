// The row quantizer: the input checks, the 16-bit formats and the 32-value
// blocks, each ggml's quantize_row_*_ref step for step (ggml-quants.c);
// the 256-value K blocks are in quantize_k.cpp. Compiled with
// -ffp-contract=off (engine/CMakeLists.txt) so that no a * b + c becomes an
// fma that ggml's build does not make.
#include "vkamp/quant/quantize.hpp"

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <string>

#include "block_bytes.hpp"
#include "quantize_detail.hpp"
#include "vkamp/float_formats.hpp"

namespace vkamp::quant {

using detail::scale_fp16;
using detail::write_u16;
using detail::write_u32;

uint16_t detail::scale_fp16(GgmlType t, float scale) {
  const uint16_t h = f32_to_fp16(scale);
  if ((h & 0x7C00u) == 0x7C00u)
    throw std::invalid_argument(std::string(ggml_type_info(t).name) + ": " + std::to_string(scale) +
                                " is past fp16's range (as a value or a block's scale: the values are too large "
                                "for the type)");
  return h;
}

namespace {

constexpr int kQK = 32;

// The codes of a 32-value block: low nibbles in qs (value j and j + 16 share
// a byte), the fifth bits (Q5_0, Q5_1) in the returned word.
template <class Code>
uint32_t pack_codes(const float* x, uint8_t* qs, Code code) {
  uint32_t qh = 0;
  for (int j = 0; j < kQK / 2; ++j) {
    const int q0 = code(x[j]), q1 = code(x[kQK / 2 + j]);
    qs[j] = uint8_t((q0 & 0xF) | ((q1 & 0xF) << 4));
    qh |= uint32_t((q0 >> 4) & 1) << j;
    qh |= uint32_t((q1 >> 4) & 1) << (j + kQK / 2);
  }
  return qh;
}

// Q4_0 / Q5_0: d = -(the value of largest magnitude) / 2^(bits-1), the
// codes x / d + 2^(bits-1) truncated from x / d + 2^(bits-1) + 0.5.
template <int Bits>
void quantize_symmetric(GgmlType t, const float* x, uint8_t* b) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < kQK; ++j)
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  constexpr int kHalf = 1 << (Bits - 1);
  const float d = max / -kHalf;
  const float id = d ? 1.0f / d : 0.0f;
  write_u16(b, scale_fp16(t, d));
  uint8_t* qs = b + (Bits == 4 ? 2 : 6);
  const auto code = [&](float v) {
    const float scaled = v * id;
    return std::min(2 * kHalf - 1, int(int8_t(scaled + (float(kHalf) + 0.5f))));
  };
  const uint32_t qh = pack_codes(x, qs, code);
  if (Bits == 5) write_u32(b + 2, qh);
}

// Q4_1 / Q5_1: d = (max - min) / (2^bits - 1), m = min, codes (x - min) / d
// truncated from + 0.5 (Q4_1 capped at 15; ggml caps Q5_1 by its bit masks).
template <int Bits>
void quantize_affine(GgmlType t, const float* x, uint8_t* b) {
  float min = FLT_MAX, max = -FLT_MAX;
  for (int j = 0; j < kQK; ++j) {
    if (x[j] < min) min = x[j];
    if (x[j] > max) max = x[j];
  }
  const float d = (max - min) / ((1 << Bits) - 1);
  const float id = d ? 1.0f / d : 0.0f;
  write_u16(b, scale_fp16(t, d));
  write_u16(b + 2, scale_fp16(t, min));
  uint8_t* qs = b + (Bits == 4 ? 4 : 8);
  const auto code = [&](float v) {
    const float scaled = (v - min) * id;
    return Bits == 4 ? std::min(15, int(int8_t(scaled + 0.5f))) : int(uint8_t(scaled + 0.5f));
  };
  const uint32_t qh = pack_codes(x, qs, code);
  if (Bits == 5) write_u32(b + 4, qh);
}

// Q8_0: d = max |x| / 127, codes round(x / d) (halves away from zero).
void quantize_q8_0(const float* x, uint8_t* b) {
  float amax = 0.0f;
  for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127;
  const float id = d ? 1.0f / d : 0.0f;
  write_u16(b, scale_fp16(GgmlType::Q8_0, d));
  for (int j = 0; j < kQK; ++j) b[2 + j] = uint8_t(int8_t(std::round(x[j] * id)));
}

// ggml_compute_fp32_to_bf16 for finite values: round to nearest even. A
// value that rounds to inf (past 3.3895e38) is refused as fp16's are.
uint16_t bf16_bits(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint16_t h = uint16_t((u + (0x7FFFu + ((u >> 16) & 1u))) >> 16);
  if ((h & 0x7F80u) == 0x7F80u)
    throw std::invalid_argument("bf16: " + std::to_string(f) + " rounds past bf16's range");
  return h;
}

void quantize_block(GgmlType t, const float* x, uint8_t* b) {
  switch (t) {
    case GgmlType::F32: write_u32(b, std::bit_cast<uint32_t>(x[0])); return;
    case GgmlType::F16: write_u16(b, scale_fp16(t, x[0])); return;
    case GgmlType::BF16: write_u16(b, bf16_bits(x[0])); return;
    case GgmlType::Q4_0: quantize_symmetric<4>(t, x, b); return;
    case GgmlType::Q5_0: quantize_symmetric<5>(t, x, b); return;
    case GgmlType::Q4_1: quantize_affine<4>(t, x, b); return;
    case GgmlType::Q5_1: quantize_affine<5>(t, x, b); return;
    case GgmlType::Q8_0: quantize_q8_0(x, b); return;
    case GgmlType::Q4_K: detail::quantize_q4_k_block(x, b); return;
    case GgmlType::Q5_K: detail::quantize_q5_k_block(x, b); return;
    case GgmlType::Q6_K: detail::quantize_q6_k_block(x, b); return;
  }
}

}  // namespace

void quantize_row(GgmlType t, const float* x, uint8_t* blocks, uint64_t n) {
  const GgmlTypeInfo& info = ggml_type_info(t);
  const uint64_t nblocks = ggml_row_bytes(t, n) / info.block_bytes;  // checks n
  for (uint64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i]))
      throw std::invalid_argument(std::string("quantize_row(") + info.name + "): value " + std::to_string(i) +
                                  " of the row is " + (std::isnan(x[i]) ? "NaN" : "inf"));
  for (uint64_t b = 0; b < nblocks; ++b) quantize_block(t, x + b * info.block_values, blocks + b * info.block_bytes);
}

}  // namespace vkamp::quant

namespace vkamp::quant {

void quantize_rows_in_parallel(GgmlType t, const float* x, uint8_t* blocks, uint64_t n) {
  const GgmlTypeInfo& info = ggml_type_info(t);
  const uint64_t count = n / info.block_values;
  const uint64_t threads = std::min<uint64_t>(std::max(1u, std::thread::hardware_concurrency()), count / 64 + 1);
  if (threads <= 1 || n % info.block_values != 0) return quantize_row(t, x, blocks, n);
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  const uint64_t per = (count + threads - 1) / threads;
  for (uint64_t i = 0; i < threads; ++i) {
    const uint64_t first = i * per, last = std::min(count, first + per);
    if (first >= last) break;
    pool.emplace_back([&, i, first, last] {
      try {
        quantize_row(t, x + first * info.block_values, blocks + first * info.block_bytes,
                     (last - first) * info.block_values);
      } catch (...) {
        errors[static_cast<size_t>(i)] = std::current_exception();
      }
    });
  }
  for (std::thread& th : pool) th.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace vkamp::quant
