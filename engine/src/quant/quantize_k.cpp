// The 256-value K blocks as ggml's quantize_row_q{4,5,6}_K_ref make them
// (ggml-quants.c): per 32-value sub-block a weighted least-squares search for
// scale and min (make_qkx2_quants), per 16-value one for a signed scale
// (make_qx_quants), the sub-block scales then quantized to 6 or 8 bits
// against one fp16 scale per block. Each sum and product in ggml's order,
// compiled with -ffp-contract=off (engine/CMakeLists.txt), so the bytes are
// ggml's.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "block_bytes.hpp"
#include "quantize_detail.hpp"
#include "vkamp/quant/dequantize.hpp"

namespace vkamp::quant::detail {
namespace {

constexpr int kQK_K = 256;
constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS

// make_qkx2_quants: codes L in [0, nmax] and the (scale, -min) minimising
// the weighted squared error over nstep + 1 trial scales.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                       uint8_t* Laux, float rmin, float rdelta, int nstep) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill(L, L + n, uint8_t(0));
    *the_min = -min;
    return 0.f;
  }
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    const int l = nearest_int(iscale * (x[i] - min));
    L[i] = uint8_t(std::max(0, std::min(nmax, l)));
    const float diff = scale * L[i] + min - x[i];
    best_error += weights[i] * (diff * diff);
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * is + nmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min))));
      Laux[i] = uint8_t(l);
      const float w = weights[i];
      sum_l += w * l;
      sum_l2 += w * l * l;
      sum_xl += w * l * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        const float diff = this_scale * Laux[i] + this_min - x[i];
        cur_error += weights[i] * (diff * diff);
      }
      if (cur_error < best_error) {
        std::copy(Laux, Laux + n, L);
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

// Q4_K / Q5_K (nmax 15 / 31): 8 sub-blocks' scales and mins as 6-bit
// multiples of d and dmin, then every code again against those.
void quantize_scale_min_block(GgmlType t, const float* x, uint8_t* b, int nmax, float rmin, int nstep,
                              uint8_t* L) {
  uint8_t Laux[32];
  float weights[32], mins[8], scales[8];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin, 0.1f, nstep);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  uint8_t* sc = b + 4;
  for (int j = 0; j < 8; ++j) {
    const uint8_t ls = std::min<uint8_t>(63, uint8_t(nearest_int(inv_scale * scales[j])));
    const uint8_t lm = std::min<uint8_t>(63, uint8_t(nearest_int(inv_min * mins[j])));
    if (j < 4) {
      sc[j] = ls;
      sc[j + 4] = lm;
    } else {
      sc[j + 4] = uint8_t((ls & 0xF) | ((lm & 0xF) << 4));
      sc[j - 4] |= uint8_t((ls >> 4) << 6);
      sc[j] |= uint8_t((lm >> 4) << 6);
    }
  }
  write_u16(b, scale_fp16(t, max_scale / 63.f));
  write_u16(b + 2, scale_fp16(t, max_min / 63.f));
  for (int j = 0; j < 8; ++j) {
    const ScaleMin sm = scale_min_k4(sc, uint32_t(j));
    const float d = ggml_fp16_to_f32(read_u16(b)) * sm.scale;
    if (!d) continue;  // ggml keeps the search's codes for this sub-block
    const float dm = ggml_fp16_to_f32(read_u16(b + 2)) * sm.min;
    for (int ii = 0; ii < 32; ++ii)
      L[32 * j + ii] = uint8_t(std::max(0, std::min(nmax, nearest_int((x[32 * j + ii] + dm) / d))));
  }
}

// make_qx_quants with rmse_type 1 (weights x^2) and no importance: signed
// codes L - nmax in [-nmax, nmax - 1] and the best of 19 trial scales.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, int8_t(0));
    return 0.f;
  }
  const auto code = [&](float iscale, int i) { return std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i]))); };
  // The weighted sums of x * l and l * l at one trial scale.
  const auto sums = [&](float iscale, float& sumlx, float& suml2) {
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = code(iscale, i);
      const float w = x[i] * x[i];
      sumlx += w * x[i] * l;
      suml2 += w * l * l;
    }
  };
  float iscale = -nmax / max;
  float sumlx, suml2;
  sums(iscale, sumlx, suml2);
  for (int i = 0; i < n; ++i) L[i] = int8_t(code(iscale, i) + nmax);
  float scale = suml2 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(nmax + 0.1f * is) / max;
    sums(iscale, sumlx, suml2);
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) L[i] = int8_t(nmax + code(iscale, i));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

}  // namespace

void quantize_q4_k_block(const float* x, uint8_t* b) {
  uint8_t L[kQK_K];
  quantize_scale_min_block(GgmlType::Q4_K, x, b, 15, -1.f, 20, L);
  uint8_t* q = b + 16;
  for (int j = 0; j < kQK_K; j += 64, q += 32)
    for (int l = 0; l < 32; ++l) q[l] = uint8_t(L[j + l] | (L[j + l + 32] << 4));
}

void quantize_q5_k_block(const float* x, uint8_t* b) {
  uint8_t L[kQK_K];
  quantize_scale_min_block(GgmlType::Q5_K, x, b, 31, -0.5f, 15, L);
  uint8_t* qh = b + 16;
  uint8_t* ql = b + 48;
  std::memset(qh, 0, 32);
  // Codes of 64 values per 32 bytes of ql; their fifth bits as bits 2c, 2c + 1 of qh.
  for (int n = 0, c = 0; n < kQK_K; n += 64, ++c, ql += 32)
    for (int j = 0; j < 32; ++j) {
      const int l1 = L[n + j], l2 = L[n + j + 32];
      qh[j] |= uint8_t(((l1 >> 4) & 1) << (2 * c)) | uint8_t(((l2 >> 4) & 1) << (2 * c + 1));
      ql[j] = uint8_t((l1 & 0xF) | ((l2 & 0xF) << 4));
    }
}

void quantize_q6_k_block(const float* x, uint8_t* b) {
  int8_t L[kQK_K];
  float scales[16];
  float max_scale = 0, max_abs_scale = 0;
  for (int ib = 0; ib < 16; ++ib) {
    scales[ib] = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib);
    const float abs_scale = std::fabs(scales[ib]);
    if (abs_scale > max_abs_scale) {
      max_abs_scale = abs_scale;
      max_scale = scales[ib];
    }
  }
  if (max_abs_scale < kGroupMaxEps) {
    std::memset(b, 0, 210);
    return;
  }
  const float iscale = -128.f / max_scale;
  write_u16(b + 208, scale_fp16(GgmlType::Q6_K, 1 / iscale));
  int8_t* sc = reinterpret_cast<int8_t*>(b + 192);
  for (int ib = 0; ib < 16; ++ib) sc[ib] = int8_t(std::min(127, nearest_int(iscale * scales[ib])));
  for (int j = 0; j < 16; ++j) {
    const float d = ggml_fp16_to_f32(read_u16(b + 208)) * sc[j];
    if (!d) continue;
    for (int ii = 0; ii < 16; ++ii)
      L[16 * j + ii] = int8_t(std::max(-32, std::min(31, nearest_int(x[16 * j + ii] / d))) + 32);
  }
  uint8_t* ql = b;
  uint8_t* qh = b + 128;
  for (int j = 0; j < kQK_K; j += 128, ql += 64, qh += 32)
    for (int l = 0; l < 32; ++l) {
      const int q1 = L[j + l], q2 = L[j + l + 32], q3 = L[j + l + 64], q4 = L[j + l + 96];
      ql[l] = uint8_t((q1 & 0xF) | ((q3 & 0xF) << 4));
      ql[l + 32] = uint8_t((q2 & 0xF) | ((q4 & 0xF) << 4));
      qh[l] = uint8_t((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
    }
}

}  // namespace vkamp::quant::detail
