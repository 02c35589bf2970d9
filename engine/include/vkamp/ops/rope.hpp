// Rotary position embeddings as Hugging Face's Llama applies them ("rotate
// half"), and the layout attention reads: from a position's q (heads x hd),
// k and v (kv_heads x hd each) the op writes one row q' | k' | v' of
// 3 x heads x hd, where q' and k' are rotated and each key/value head is
// repeated for its heads / kv_heads query heads (grouped-query attention,
// as HF's repeat_kv), so every attention path runs GQA unchanged.
//
// Per head, with half = hd / 2 and f = j mod half, the pair (j, j + half)
// turns by the angle position * inv_freq[f]:
//   out[j]        = x[j] cos - x[j + half] sin
//   out[j + half] = x[j + half] cos + x[j] sin
// in fp32 from a table of cos and sin computed in double on the host (an
// fp32 cos of a large angle is not accurate on every driver), one rounding
// per output. The backward turns by minus the angle and sums a key/value
// head's gradient over the query heads sharing it, in fp32.
#pragma once
#include <cstdint>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/ops/grad_write.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

// config.json's rope_theta and rope_scaling. Llama 3's scaling (rope_type
// "llama3") divides the low frequencies by `factor` and blends the middle
// band; factor 0 means none.
struct Rope {
  double theta = 10000;
  double factor = 0, low_freq_factor = 1, high_freq_factor = 4;
  uint32_t original_max_positions = 8192;
  // llama.cpp's rope_freqs tensor, which GGUF files of Llama 3.1 and later
  // carry instead of the scaling's parameters: inv_freq[i] is divided by
  // freq_factors[i] (empty: none).
  std::vector<double> freq_factors;
  bool operator==(const Rope&) const = default;
};

// inv_freq[i] = theta^(-2i / hd) for i < hd / 2, then Llama 3's scaling
// or the freq_factors.
std::vector<double> rope_inverse_frequencies(const Rope& rope, uint32_t head_dim);
// cos of position p * inv_freq[f] at [p * half + f] for p < positions, then
// sin in the same layout: 2 x positions x half floats.
std::vector<float> rope_table(const Rope& rope, uint32_t head_dim, uint32_t positions);

struct RopeShape {
  uint32_t rows = 0;        // batch x seq token rows
  uint32_t seq = 0;         // positions per example (row r is position r mod seq)
  uint32_t heads = 0, kv_heads = 0, head_dim = 0;
  uint32_t first_position = 0;   // of row 0 (decoding with a cache: the cached length)
  uint32_t table_positions = 0;  // rows of the table (>= first_position + seq)
};

// q [rows, heads hd], k and v [rows, kv_heads hd] -> qkv [rows, 3 heads hd].
void rope_forward(Sequence& seq, Format fmt, BufferView table, BufferView q, BufferView k, BufferView v,
                  BufferView qkv, const RopeShape& s);

// dq, dk, dv from dqkv, each per its GradWrite.
struct RopeGrads {
  BufferView dq, dk, dv;
  GradWrite q = GradWrite::Write, k = GradWrite::Write, v = GradWrite::Write;
};
void rope_backward(Sequence& seq, Format fmt, BufferView table, BufferView dqkv, const RopeGrads& grads,
                   const RopeShape& s);

}  // namespace vkamp::ops
