// Rotary position embedding with the grouped-query layout (ops/rope.hpp):
// forward and backward against a double reference whose angles are taken
// in double (not from the op's fp32 table), for heads sharing 1, 2 or all
// key/value heads, at every format and size, batches of several sequences,
// a decoding offset far into the table, gradients written, added and
// skipped, inf and NaN where the reference has them, and the backward as
// the forward's exact transpose (the op is linear) by finite differences.
//
// Bounds (ErrorBudget): an output is x c -+ x' s in fp32 from a table
// whose cos and sin are double values rounded to fp32 (an error of 2^-24
// of each), with up to two roundings in the expression (one with FMA):
// 4 fp32 ulps of |x| + |x'|, then one rounding to the format. A key/value
// gradient sums `group` such terms in fp32: 4 + group ulps of their
// magnitudes. An added gradient rounds once more.
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <numbers>
#include <span>

#include "support/cases.hpp"
#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "vkamp/ops/rope.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

using ops::GradWrite;

struct Heads {
  uint32_t heads, kv_heads, head_dim;
};
constexpr Heads kHeads[] = {{4, 4, 8}, {4, 2, 6}, {6, 1, 16}, {2, 1, 2}};

struct Tensors {
  std::vector<float> q, k, v;
};

class Rope : public GpuTestP<FormatSize> {
 protected:
  Format fmt() const { return std::get<0>(GetParam()); }
  uint32_t rows() const { return std::get<1>(GetParam()); }
  // Two sequences per batch where the rows split evenly.
  uint32_t seq_len() const { return rows() % 2 == 0 ? rows() / 2 : rows(); }

  ops::RopeShape shape(const Heads& h, uint32_t first = 0) const {
    return {rows(), seq_len(), h.heads, h.kv_heads, h.head_dim, first, first + seq_len()};
  }

  Tensors inputs(const Heads& h, float lo = -4, float hi = 4) {
    const size_t q = size_t(rows()) * h.heads * h.head_dim, kv = size_t(rows()) * h.kv_heads * h.head_dim;
    return {random_values(q, lo, hi, fmt()), random_values(kv, lo, hi, fmt()), random_values(kv, lo, hi, fmt())};
  }

  // The angle of pair f at row r, in double.
  double angle(const ops::Rope& rope, const ops::RopeShape& s, uint32_t r, uint32_t f) const {
    return double(s.first_position + r % s.seq) * std::pow(rope.theta, -2.0 * f / s.head_dim);
  }

  std::vector<float> forward(Format f, const ops::Rope& rope, const ops::RopeShape& s, const Tensors& in) {
    Buffer table = upload(ctx(), Format::F32, ops::rope_table(rope, s.head_dim, s.table_positions));
    Buffer qb = upload(ctx(), f, in.q), kb = upload(ctx(), f, in.k), vb = upload(ctx(), f, in.v);
    const size_t n = size_t(s.rows) * 3 * s.heads * s.head_dim;
    Buffer out = poisoned(ctx(), f, n);
    Sequence seq(ctx());
    seq.begin();
    ops::rope_forward(seq, f, table, qb, kb, vb, out, s);
    seq.end();
    seq.run();
    return download(out, f, n);
  }

  // dq, dk, dv from dqkv; `old` holds the values added to.
  Tensors backward(Format f, const ops::Rope& rope, const ops::RopeShape& s, const std::vector<float>& dqkv,
                   GradWrite qw, GradWrite kw, GradWrite vw, const Tensors* old = nullptr) {
    Buffer table = upload(ctx(), Format::F32, ops::rope_table(rope, s.head_dim, s.table_positions));
    Buffer db = upload(ctx(), f, dqkv);
    const size_t q = size_t(s.rows) * s.heads * s.head_dim, kv = size_t(s.rows) * s.kv_heads * s.head_dim;
    auto target = [&](GradWrite w, const std::vector<float>* was, size_t count) {
      return w == GradWrite::Add ? upload(ctx(), f, *was) : poisoned(ctx(), f, count);
    };
    Buffer dq = target(qw, old ? &old->q : nullptr, q), dk = target(kw, old ? &old->k : nullptr, kv),
           dv = target(vw, old ? &old->v : nullptr, kv);
    Sequence seq(ctx());
    seq.begin();
    ops::rope_backward(seq, f, table, db, {dq, dk, dv, qw, kw, vw}, s);
    seq.end();
    seq.run();
    return {download(dq, f, q), download(dk, f, kv), download(dv, f, kv)};
  }

  // Forward reference and check: each block of the row against the
  // rotation of its source head.
  void expect_forward(const ops::Rope& rope, const ops::RopeShape& s, const Tensors& in,
                      const std::vector<float>& out) {
    const uint32_t hd = s.head_dim, half = hd / 2, group = s.heads / s.kv_heads;
    std::vector<double> ref;
    ErrorBudget budget(fmt());
    for (uint32_t r = 0; r < s.rows; ++r)
      for (uint32_t part = 0; part < 3; ++part)
        for (uint32_t h = 0; h < s.heads; ++h)
          for (uint32_t j = 0; j < hd; ++j) {
            const std::vector<float>& src = part == 0 ? in.q : part == 1 ? in.k : in.v;
            const uint32_t src_heads = part == 0 ? s.heads : s.kv_heads, sh = part == 0 ? h : h / group;
            const size_t at = (size_t(r) * src_heads + sh) * hd;
            const double x = src[at + j], partner = src[at + (j < half ? j + half : j - half)];
            double y = x, mag = 0;
            if (part < 2) {
              const double a = angle(rope, s, r, j % half);
              y = j < half ? x * std::cos(a) - partner * std::sin(a) : x * std::cos(a) + partner * std::sin(a);
              mag = 4 * (std::abs(x) + std::abs(partner));
            }
            ref.push_back(y);
            budget.add(y, budget.rounded(y), mag);
          }
    EXPECT_TRUE(close_to(out, ref, budget.bound(), smallest_normal(fmt())));
  }

  // Backward reference: each head's gradient turned back by its angle,
  // summed over the query heads that read it.
  void expect_backward(const ops::Rope& rope, const ops::RopeShape& s, const std::vector<float>& dqkv,
                       const Tensors& out, GradWrite qw, GradWrite kw, GradWrite vw, const Tensors* old = nullptr) {
    const uint32_t hd = s.head_dim, half = hd / 2, group = s.heads / s.kv_heads, qc = s.heads * hd;
    for (uint32_t part = 0; part < 3; ++part) {
      const GradWrite w = part == 0 ? qw : part == 1 ? kw : vw;
      const std::vector<float>& got = part == 0 ? out.q : part == 1 ? out.k : out.v;
      SCOPED_TRACE(::testing::Message() << "d" << "qkv"[part]);
      if (w == GradWrite::Skip) {
        for (float v : got) ASSERT_TRUE(std::isnan(v)) << "a skipped gradient is never written";
        continue;
      }
      const uint32_t part_heads = part == 0 ? s.heads : s.kv_heads, reads = part == 0 ? 1 : group;
      std::vector<double> ref;
      ErrorBudget budget(fmt());
      for (uint32_t r = 0; r < s.rows; ++r)
        for (uint32_t sh = 0; sh < part_heads; ++sh)
          for (uint32_t j = 0; j < hd; ++j) {
            double sum = 0, mag = 0;
            for (uint32_t g = 0; g < reads; ++g) {
              const size_t at = size_t(r) * 3 * qc + part * qc + (sh * reads + g) * hd;
              const double d = dqkv[at + j], partner = dqkv[at + (j < half ? j + half : j - half)];
              double term = d;
              if (part < 2) {
                const double a = angle(rope, s, r, j % half);
                term = j < half ? d * std::cos(a) + partner * std::sin(a) : d * std::cos(a) - partner * std::sin(a);
              }
              sum += term;
              if (part < 2) mag += 4 * (std::abs(d) + std::abs(partner));
              if (reads > 1) mag += reads * std::abs(term);
            }
            const bool added = w == GradWrite::Add;
            const double v = added ? sum + (part == 0 ? old->q : part == 1 ? old->k : old->v)[ref.size()] : sum;
            ref.push_back(v);
            budget.add(v, budget.rounded(v), mag + (added ? std::abs(v) : 0.0));
          }
      EXPECT_TRUE(close_to(got, ref, budget.bound(), smallest_normal(fmt())));
    }
  }

  // The head layouts for_each_heads visits.
  std::span<const Heads> heads_ = kHeads;

  template <class Check>
  void for_each_heads(Check check) {
    for (const Heads& h : heads_) {
      SCOPED_TRACE(::testing::Message() << h.heads << " heads, " << h.kv_heads << " kv heads of " << h.head_dim);
      check(h);
    }
  }

  // Forward, then the backward writing every gradient, at each theta.
  void expect_forward_and_backward(std::initializer_list<double> thetas) {
    for (double theta : thetas) {
      SCOPED_TRACE(::testing::Message() << "theta " << theta);
      const ops::Rope rope{.theta = theta};
      for_each_heads([&](const Heads& h) {
        const ops::RopeShape s = shape(h);
        const Tensors in = inputs(h);
        expect_forward(rope, s, in, forward(fmt(), rope, s, in));
        const std::vector<float> dqkv = random_values(size_t(rows()) * 3 * h.heads * h.head_dim, -2, 2, fmt());
        expect_backward(rope, s, dqkv,
                        backward(fmt(), rope, s, dqkv, GradWrite::Write, GradWrite::Write, GradWrite::Write),
                        GradWrite::Write, GradWrite::Write, GradWrite::Write);
      });
    }
  }
};

TEST_P(Rope, ForwardAndBackward) { expect_forward_and_backward({10000.0, 500000.0, 37.0}); }

// Decoding: the rows are positions 3000.. of a longer table, angles of
// thousands of radians, where an fp32 angle would have lost its low bits.
TEST_P(Rope, FarPositionsOfALongTable) {
  const ops::Rope rope{};
  for_each_heads([&](const Heads& h) {
    ops::RopeShape s = shape(h, 3000);
    s.table_positions += 17;
    const Tensors in = inputs(h);
    expect_forward(rope, s, in, forward(fmt(), rope, s, in));
  });
}

TEST_P(Rope, BackwardAddsSkipsAndRepeatsItsBits) {
  const ops::Rope rope{};
  for_each_heads([&](const Heads& h) {
    const ops::RopeShape s = shape(h);
    const Tensors old = inputs(h, -3, 3);
    const std::vector<float> dqkv = random_values(size_t(rows()) * 3 * h.heads * h.head_dim, -2, 2, fmt());
    for (auto [qw, kw, vw] : {std::tuple{GradWrite::Add, GradWrite::Add, GradWrite::Add},
                              std::tuple{GradWrite::Skip, GradWrite::Add, GradWrite::Write},
                              std::tuple{GradWrite::Add, GradWrite::Skip, GradWrite::Skip}}) {
      const Tensors a = backward(fmt(), rope, s, dqkv, qw, kw, vw, &old);
      expect_backward(rope, s, dqkv, a, qw, kw, vw, &old);
      const Tensors b = backward(fmt(), rope, s, dqkv, qw, kw, vw, &old);
      for (auto m : {&Tensors::q, &Tensors::k, &Tensors::v})
        EXPECT_EQ(0, std::memcmp((a.*m).data(), (b.*m).data(), (a.*m).size() * sizeof(float)));
    }
  });
}

// An inf or NaN reaches its own output and its pair's (and, backward, the
// key/value heads' sums), exactly where the double reference has it.
TEST_P(Rope, InfAndNanWhereTheReferenceHasThem) {
  const ops::Rope rope{};
  const float specials[] = {kInf, -kInf, kNan};
  for_each_heads([&](const Heads& h) {
    const ops::RopeShape s = shape(h);
    Tensors in = inputs(h);
    std::vector<float> dqkv = random_values(size_t(rows()) * 3 * h.heads * h.head_dim, -2, 2, fmt());
    for (size_t i = 0; i < 3; ++i) {
      std::vector<float>& t = i == 0 ? in.q : i == 1 ? in.k : in.v;
      t[std::uniform_int_distribution<size_t>(0, t.size() - 1)(rng())] = specials[i];
      dqkv[std::uniform_int_distribution<size_t>(0, dqkv.size() - 1)(rng())] = specials[i];
    }
    expect_forward(rope, s, in, forward(fmt(), rope, s, in));
    expect_backward(rope, s, dqkv, backward(fmt(), rope, s, dqkv, GradWrite::Write, GradWrite::Write, GradWrite::Write),
                    GradWrite::Write, GradWrite::Write, GradWrite::Write);
  });
}

// The op is linear, so <d(q,k,v), step> equals the difference of
// L = sum(r * out) at x + step and x - step up to rounding: the backward is
// the forward's transpose, the key/value sums included.
TEST_P(Rope, BackwardMatchesFiniteDifferences) {
  if (fmt() != Format::F32) GTEST_SKIP() << "the differences are taken in fp32";
  const ops::Rope rope{};
  for_each_heads([&](const Heads& h) {
    const ops::RopeShape s = shape(h);
    const Tensors x = inputs(h), dir = inputs(h, -1, 1);
    const std::vector<float> r = random_values(size_t(rows()) * 3 * h.heads * h.head_dim, -1, 1, Format::F32);
    const float step = 1.0f / 64;
    auto moved = [&](float sign) {
      Tensors t = x;
      for (auto m : {&Tensors::q, &Tensors::k, &Tensors::v})
        for (size_t i = 0; i < (t.*m).size(); ++i) (t.*m)[i] = (x.*m)[i] + sign * step * (dir.*m)[i];
      return t;
    };
    double size = 0;
    auto loss = [&](const Tensors& at) {
      const std::vector<float> out = forward(Format::F32, rope, s, at);
      double l = 0;
      for (size_t i = 0; i < out.size(); ++i) l += double(r[i]) * out[i], size += std::abs(double(r[i]) * out[i]);
      return l;
    };
    const Tensors plus = moved(1), minus = moved(-1);
    const double fd = loss(plus) - loss(minus);
    const Tensors g = backward(Format::F32, rope, s, r, GradWrite::Write, GradWrite::Write, GradWrite::Write);
    double dot = 0, gn = 0, sn = 0;
    for (auto m : {&Tensors::q, &Tensors::k, &Tensors::v})
      for (size_t i = 0; i < (g.*m).size(); ++i) {
        const double d = double((plus.*m)[i]) - (minus.*m)[i];
        dot += (g.*m)[i] * d, gn += double((g.*m)[i]) * (g.*m)[i], sn += d * d;
      }
    // Only roundings: 4 ulps of each output of the two forwards, the
    // backward's 4 + group ulps.
    const double scale = std::sqrt(gn * sn);
    const double rel = 8 * 0x1p-24 * size / scale + (4.0 + h.heads / h.kv_heads) * 0x1p-24 * 4;
    EXPECT_LE(std::abs(dot - fd) / scale, rel) << "<grad, step> " << dot << ", central difference " << fd;
  });
}

// Llama 3's scaling against transformers' rule at its defining points:
// factor 8, low 1, high 4, original context 8192 (Llama 3.1's): wavelengths
// below 2048 are kept, above 8192 divided by 8, and between blended.
TEST(RopeFrequencies, Llama3Scaling) {
  const ops::Rope plain{.theta = 500000}, scaled{.theta = 500000, .factor = 8, .low_freq_factor = 1,
                                                 .high_freq_factor = 4, .original_max_positions = 8192};
  const std::vector<double> a = ops::rope_inverse_frequencies(plain, 128), b = ops::rope_inverse_frequencies(scaled, 128);
  ASSERT_EQ(a.size(), 64u);
  int kept = 0, divided = 0, blended = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_DOUBLE_EQ(a[i], std::pow(500000.0, -2.0 * double(i) / 128));
    const double wavelen = 2 * std::numbers::pi / a[i];
    if (wavelen < 2048) {
      EXPECT_EQ(b[i], a[i]);
      ++kept;
    } else if (wavelen > 8192) {
      EXPECT_DOUBLE_EQ(b[i], a[i] / 8);
      ++divided;
    } else {
      const double smooth = (8192 / wavelen - 1) / 3;
      EXPECT_DOUBLE_EQ(b[i], (1 - smooth) * a[i] / 8 + smooth * a[i]);
      EXPECT_LE(b[i], a[i]);
      EXPECT_GE(b[i], a[i] / 8);
      ++blended;
    }
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(divided, 0);
  EXPECT_GT(blended, 0);
}

INSTANTIATE_TEST_SUITE_P(Shaders, Rope, all_formats_and_sizes(), format_size_name);

// Real models' heads: Qwen2.5-0.5B's 14 over 2 key/value heads of 64, and
// Llama 3 8B's 32 over 8 of 128, at their thetas (1e6, 500,000), over two
// sequences of 128 positions.
constexpr Heads kRealHeads[] = {{14, 2, 64}, {32, 8, 128}};

class RopeRealSize : public Rope {
 protected:
  RopeRealSize() { heads_ = kRealHeads; }
};

TEST_P(RopeRealSize, ForwardAndBackward) { expect_forward_and_backward({1e6, 500000.0}); }

INSTANTIATE_TEST_SUITE_P(RealSize, RopeRealSize,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::Values(256u)),
                         format_size_name);

}  // namespace
}  // namespace vkamp::test
