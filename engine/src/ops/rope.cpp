#include "vkamp/ops/rope.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "vkamp/gpu_abi/rope.h"
#include "op_util.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/error.hpp"

namespace vkamp::ops {

namespace {

void check(const char* op, const RopeShape& s) {
  if (!s.seq || !s.heads || !s.kv_heads || !s.head_dim)
    throw Error(std::string(op) + ": seq, heads, kv_heads and head_dim must be >= 1");
  if (s.head_dim % 2) throw Error(std::string(op) + ": head_dim " + std::to_string(s.head_dim) + " is odd");
  if (s.heads % s.kv_heads)
    throw Error(std::string(op) + ": " + std::to_string(s.heads) + " heads do not share " +
                std::to_string(s.kv_heads) + " key/value heads evenly");
  if (s.rows % s.seq) throw Error(std::string(op) + ": rows must be a multiple of seq");
  if (uint64_t(s.first_position) + s.seq > s.table_positions)
    throw Error(std::string(op) + ": positions up to " + std::to_string(uint64_t(s.first_position) + s.seq) +
                " but a table of " + std::to_string(s.table_positions));
  if (3 * uint64_t(s.rows) * s.heads * s.head_dim > UINT32_MAX) throw Error(std::string(op) + ": more than 2^32 values");
}

struct Part {
  BufferView data;
  uint32_t heads, offset, rotate;
};

shader::RopePush push(const RopeShape& s, const Part& part, uint32_t accumulate) {
  return {s.rows, s.seq, s.first_position, s.table_positions, part.heads, s.heads, s.head_dim,
          part.offset, part.rotate, accumulate};
}

}  // namespace

std::vector<double> rope_inverse_frequencies(const Rope& rope, uint32_t head_dim) {
  std::vector<double> f(head_dim / 2);
  for (size_t i = 0; i < f.size(); ++i) f[i] = std::pow(rope.theta, -2.0 * double(i) / head_dim);
  if (!rope.freq_factors.empty()) {
    if (rope.freq_factors.size() != f.size())
      throw ConfigError("rope_freqs holds " + std::to_string(rope.freq_factors.size()) + " factors for " +
                        std::to_string(f.size()) + " frequencies");
    for (size_t i = 0; i < f.size(); ++i) f[i] /= rope.freq_factors[i];
    return f;
  }
  if (rope.factor == 0) return f;
  // transformers' _compute_llama3_parameters: wavelengths beyond the
  // original context / low_freq_factor are slowed by `factor`, those below
  // it / high_freq_factor kept, and the band between blended linearly in
  // original_context / wavelength.
  const double context = rope.original_max_positions;
  const double low_wavelen = context / rope.low_freq_factor, high_wavelen = context / rope.high_freq_factor;
  for (double& v : f) {
    const double wavelen = 2 * std::numbers::pi / v;
    if (wavelen > low_wavelen) {
      v /= rope.factor;
    } else if (wavelen >= high_wavelen) {
      const double smooth = (context / wavelen - rope.low_freq_factor) / (rope.high_freq_factor - rope.low_freq_factor);
      v = (1 - smooth) * v / rope.factor + smooth * v;
    }
  }
  return f;
}

std::vector<float> rope_table(const Rope& rope, uint32_t head_dim, uint32_t positions) {
  const std::vector<double> f = rope_inverse_frequencies(rope, head_dim);
  const size_t half = f.size();
  std::vector<float> t(2 * size_t(positions) * half);
  for (uint32_t p = 0; p < positions; ++p)
    for (size_t i = 0; i < half; ++i) {
      const double angle = double(p) * f[i];
      t[p * half + i] = float(std::cos(angle));
      t[(positions + p) * half + i] = float(std::sin(angle));
    }
  return t;
}

void rope_forward(Sequence& seq, Format fmt, BufferView table, BufferView q, BufferView k, BufferView v,
                  BufferView qkv, const RopeShape& s) {
  check("rope_forward", s);
  const size_t eb = format_bytes(fmt);
  const uint64_t qc = uint64_t(s.heads) * s.head_dim, kvc = uint64_t(s.kv_heads) * s.head_dim;
  detail::require("rope_forward", "table", table, uint64_t(s.table_positions) * s.head_dim, sizeof(float));
  detail::require("rope_forward", "q", q, s.rows * qc, eb);
  detail::require("rope_forward", "k", k, s.rows * kvc, eb);
  detail::require("rope_forward", "v", v, s.rows * kvc, eb);
  detail::require("rope_forward", "qkv", qkv, 3 * s.rows * qc, eb);
  if (s.rows == 0) return;
  auto kernel = detail::kernel<shader::RopeShader>(seq, fmt, {0u});
  for (const Part& part : {Part{q, s.heads, 0, 1}, Part{k, s.kv_heads, uint32_t(qc), 1},
                           Part{v, s.kv_heads, uint32_t(2 * qc), 0}})
    seq.dispatch(kernel, {table, part.data, qkv}, push(s, part, 0), detail::grid_stride_groups(s.rows * qc),
                 "rope");
}

void rope_backward(Sequence& seq, Format fmt, BufferView table, BufferView dqkv, const RopeGrads& g,
                   const RopeShape& s) {
  check("rope_backward", s);
  const size_t eb = format_bytes(fmt);
  const uint64_t qc = uint64_t(s.heads) * s.head_dim, kvc = uint64_t(s.kv_heads) * s.head_dim;
  detail::require("rope_backward", "table", table, uint64_t(s.table_positions) * s.head_dim, sizeof(float));
  detail::require("rope_backward", "dqkv", dqkv, 3 * s.rows * qc, eb);
  struct Grad {
    Part part;
    GradWrite write;
    const char* name;
    uint64_t cols;
  };
  for (const Grad& grad : {Grad{{g.dq, s.heads, 0, 1}, g.q, "dq", qc},
                           Grad{{g.dk, s.kv_heads, uint32_t(qc), 1}, g.k, "dk", kvc},
                           Grad{{g.dv, s.kv_heads, uint32_t(2 * qc), 0}, g.v, "dv", kvc}}) {
    if (grad.write == GradWrite::Skip) continue;
    detail::require("rope_backward", grad.name, grad.part.data, s.rows * grad.cols, eb);
    if (s.rows == 0) continue;
    auto kernel = detail::kernel<shader::RopeShader>(seq, fmt, {1u});
    seq.dispatch(kernel, {table, grad.part.data, dqkv}, push(s, grad.part, grad.write == GradWrite::Add),
                 detail::grid_stride_groups(s.rows * grad.cols), "rope_grad");
  }
}

}  // namespace vkamp::ops
