// Bias add (y[r, c] += b[c], in place) and its gradient (db = column sums of
// dy, optionally added to db) against double references, at every rows x
// cols pair from the awkward sizes and over many chunks of rows; inf/NaN in
// y, b, dy or db reach the result; and the gradient against central
// differences of the forward.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "support/cases.hpp"
#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "vkamp/ops/bias.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

// Values after y that the in-place forward must leave alone.
constexpr float kGuard[] = {1.5f, -2.5f, 3.5f};

std::vector<double> add_bias(const std::vector<float>& y, const std::vector<float>& b) {
  std::vector<double> out(y.size());
  for (size_t i = 0; i < y.size(); ++i) out[i] = double(y[i]) + b[i % b.size()];
  return out;
}

std::vector<double> column_sums(const std::vector<float>& dy, uint32_t cols, const std::vector<float>* db) {
  std::vector<double> out(cols, 0.0);
  if (db) out.assign(db->begin(), db->end());
  for (size_t i = 0; i < dy.size(); ++i) out[i % cols] += dy[i];
  return out;
}

// The reference as the format stores it: past the range is inf.
std::vector<double> stored(Format fmt, std::vector<double> ref) {
  for (double& v : ref) v = round_reference(fmt, v);
  return ref;
}

// Column sums of dy on the device, into a poisoned db, or added to `db` when given.
std::vector<float> column_sums_on_device(Format f, const std::vector<float>& dy, uint32_t rows, uint32_t cols,
                                         const std::vector<float>* db = nullptr) {
  Buffer dyb = upload(ctx(), f, dy);
  Buffer dbb = db ? upload(ctx(), f, *db) : poisoned(ctx(), f, cols);
  Sequence seq(ctx());
  seq.begin();
  ops::bias_add_backward(seq, f, dyb, dbb, rows, cols, db != nullptr);
  seq.end();
  seq.run();
  return download(dbb, f, cols);
}

// The stored sum is rounded once to the format (1 ulp) after an fp32 sum
// of `rows` same-signed terms, whose rounding errors random-walk to about
// sqrt(rows)/3 fp32 ulps: allow sqrt(rows). Split into chunks, each term
// passes through at most rows additions still (a chunk's, then the chunks').
double column_sum_bound_for(Format f, uint32_t rows) {
  return nmse_bound(f, 1) + nmse_bound(Format::F32, std::sqrt(double(rows)));
}

// The upstream gradients have both signs, so a column's terms can cancel
// to a small sum whose error is still that of the terms: an fp32 sum of n
// terms, in any order and grouping, errs by at most (n - 1) u sum|terms|
// (u = 2^-24). That is close_to's absolute term: the largest over the
// columns whose stored sum is finite (the others are checked as inf/NaN).
// Bias's sizes only: over BiasChunks' 70,001 rows it would hide a lost row,
// and there the mean (0.5 a term) keeps the sums far from cancelling.
double column_sum_abs_error(Format f, const std::vector<float>& dy, uint32_t cols, const std::vector<float>* db) {
  const std::vector<double> ref = stored(f, column_sums(dy, cols, db));
  std::vector<double> magnitude(cols, 0.0);
  if (db)
    for (uint32_t c = 0; c < cols; ++c) magnitude[c] = std::abs(double((*db)[c]));
  for (size_t i = 0; i < dy.size(); ++i) magnitude[i % cols] += std::abs(double(dy[i]));
  double worst = 0;
  for (uint32_t c = 0; c < cols; ++c)
    if (std::isfinite(ref[c]) && std::isfinite(magnitude[c])) worst = std::max(worst, magnitude[c]);
  const double terms = double(dy.size() / cols) + (db ? 1 : 0);
  return terms * 0x1p-24 * worst;
}

class Bias : public MatrixShaderTest {
 protected:
  // y + b on the GPU, in place in a buffer that goes on past y.
  std::vector<float> forward(Format f, const std::vector<float>& y, const std::vector<float>& b) {
    std::vector<float> padded = y;
    padded.insert(padded.end(), std::begin(kGuard), std::end(kGuard));
    Buffer yb = upload(ctx(), f, padded);
    Buffer bb = upload(ctx(), f, b);
    Sequence seq(ctx());
    seq.begin();
    ops::bias_add_forward(seq, f, yb, bb, rows(), uint32_t(b.size()));
    seq.end();
    seq.run();
    std::vector<float> out = download(yb, f, padded.size());
    for (size_t i = y.size(); i < padded.size(); ++i) EXPECT_EQ(out[i], padded[i]) << "written past y at " << i;
    out.resize(y.size());
    return out;
  }

  std::vector<float> backward(const std::vector<float>& dy, uint32_t cols, const std::vector<float>* db = nullptr) {
    return column_sums_on_device(fmt(), dy, rows(), cols, db);
  }
  double column_sum_bound() const { return column_sum_bound_for(fmt(), rows()); }
  // Upstream gradients with a positive mean, so that the column sums do not
  // cancel and a relative bound applies.
  std::vector<float> upstream(uint32_t cols) { return random_values(size_t(rows()) * cols, -1, 3, fmt()); }
};

TEST_P(Bias, Forward) {
  for_each_cols([&](uint32_t cols) {
    std::vector<float> y = random_values(size_t(rows()) * cols, -4, 4, fmt());
    // |b| >= 1, so an element left unwritten cannot pass for y + b.
    std::vector<float> b = random_values(cols, 1, 3, fmt());
    // One rounding of the exact sum (fp16 arithmetic rounds the sum once too): 1 ulp.
    EXPECT_TRUE(close_to(forward(fmt(), y, b), add_bias(y, b), nmse_bound(fmt(), 1)));
  });
}

TEST_P(Bias, Backward) {
  for_each_cols([&](uint32_t cols) {
    std::vector<float> dy = upstream(cols);
    EXPECT_TRUE(close_to(backward(dy, cols), column_sums(dy, cols, nullptr), column_sum_bound(),
                         column_sum_abs_error(fmt(), dy, cols, nullptr)));
  });
}

TEST_P(Bias, BackwardAccumulates) {
  for_each_cols([&](uint32_t cols) {
    std::vector<float> dy = upstream(cols), db = random_values(cols, 0, 4, fmt());
    EXPECT_TRUE(close_to(backward(dy, cols, &db), column_sums(dy, cols, &db), column_sum_bound(),
                         column_sum_abs_error(fmt(), dy, cols, &db)));
  });
}

TEST_P(Bias, ForwardPropagatesInfAndNan) {
  const float max = float(format_max(fmt()));
  const float in_y[] = {kInf, -kInf, kNan, max, -max};
  for (float in_b : {kNan, kInf, -kInf, max}) {
    for_each_cols([&](uint32_t cols) {
      SCOPED_TRACE(::testing::Message() << "bias special " << in_b);
      std::vector<float> y = random_values(size_t(rows()) * cols, -4, 4, fmt());
      std::vector<float> b = random_values(cols, 1, 3, fmt());
      for (size_t i = 0; i < y.size(); i += 3) y[i] = in_y[(i / 3) % std::size(in_y)];
      b[std::uniform_int_distribution<uint32_t>(0, cols - 1)(rng())] = in_b;
      // inf + -inf is NaN; max + max is past the range, so inf: 1 ulp as in Forward.
      EXPECT_TRUE(close_to(forward(fmt(), y, b), stored(fmt(), add_bias(y, b)), nmse_bound(fmt(), 1)));
    });
  }
}

TEST_P(Bias, BackwardPropagatesInfAndNan) {
  const float max = float(format_max(fmt()));
  for_each_cols([&](uint32_t cols) {
    std::vector<float> dy = upstream(cols), db = random_values(cols, 0, 4, fmt());
    std::uniform_int_distribution<size_t> any(0, dy.size() - 1);
    for (float v : {kInf, -kInf, kNan, kInf}) dy[any(rng())] = v;
    // A column of the largest value sums past the range whenever rows > 1.
    uint32_t c = std::uniform_int_distribution<uint32_t>(0, cols - 1)(rng());
    for (uint32_t r = 0; r < rows(); ++r) dy[size_t(r) * cols + c] = max;
    EXPECT_TRUE(close_to(backward(dy, cols), stored(fmt(), column_sums(dy, cols, nullptr)), column_sum_bound(),
                         column_sum_abs_error(fmt(), dy, cols, nullptr)));
    db[std::uniform_int_distribution<uint32_t>(0, cols - 1)(rng())] = kNan;  // an accumulated NaN stays
    EXPECT_TRUE(close_to(backward(dy, cols, &db), stored(fmt(), column_sums(dy, cols, &db)), column_sum_bound(),
                         column_sum_abs_error(fmt(), dy, cols, &db)));
  });
}

TEST_P(Bias, BackwardMatchesFiniteDifferences) {
  // L(b) = sum(G * (Y + b)) with the forward run in F32; dL/db = column sums
  // of G, from the backward in the format under test. L is linear in b, so
  // a large step costs nothing: the difference of the two sides is rounding.
  const float h = 0.5f;
  for_each_cols([&](uint32_t cols) {
    size_t n = size_t(rows()) * cols;
    std::vector<float> y = random_values(n, -2, 2, Format::F32), g = upstream(cols);
    // v in [0.5, 1): a step that cannot vanish next to the forward's rounding.
    std::vector<float> b = random_values(cols, -1, 1, Format::F32), v = random_values(cols, 0.5f, 1, Format::F32);
    std::vector<float> plus(cols), minus(cols);
    for (uint32_t c = 0; c < cols; ++c) {
      plus[c] = b[c] + h * v[c];
      minus[c] = b[c] - h * v[c];
    }
    auto loss = [&](const std::vector<float>& bias) {
      std::vector<float> out = forward(Format::F32, y, bias);
      double l = 0;
      for (size_t i = 0; i < n; ++i) l += double(g[i]) * out[i];
      return l;
    };
    double fd = loss(plus) - loss(minus);
    std::vector<float> db = backward(g, cols);
    double dot = 0, db_norm = 0, step_norm = 0;
    for (uint32_t c = 0; c < cols; ++c) {
      double step = double(plus[c]) - minus[c];  // the step actually taken
      dot += db[c] * step;
      db_norm += double(db[c]) * db[c];
      step_norm += step * step;
    }
    // Relative to |db| |step|: db is rounded once to the format (1 ulp),
    // after fp32 column sums (sqrt(rows) ulps, as in Backward); the F32
    // forward rounds each Y + b, which reaches the difference of the losses
    // as up to ~8 ulps of |db| |step| at 1 x 1, less as the sums grow.
    double bound = nmse_bound(fmt(), 1) + nmse_bound(Format::F32, 8 + std::sqrt(double(rows())));
    double err = (dot - fd) * (dot - fd) / (db_norm * step_norm);
    EXPECT_LE(err, bound) << "<db, step> " << dot << ", central difference " << fd;
  });
}

INSTANTIATE_TEST_SUITE_P(Shaders, Bias, all_formats_and_sizes(), format_size_name);

// Column sums split into many chunks, the last one ragged: 70,001 x 3 is
// 3 chunks on CPU drivers (of the most rows, 32,768) and 1,015 of 69 rows
// on GPUs (and under VKAMP_COLUMN_SUM=gpu); 5,000 x 300, whose second
// 256-wide column group is ragged too, is 3 chunks of 1,747 rows on CPU
// drivers and 79 of 64 on GPUs (op_util.hpp column_sum_chunk_rows).
class BiasChunks : public GpuTestP<Format> {
 protected:
  Format fmt() const { return GetParam(); }
  static constexpr std::pair<uint32_t, uint32_t> kShapes[] = {{70001, 3}, {5000, 300}};
  // A positive mean as Bias's upstream(), but 0.5: 70,001 rows sum to about
  // 35,000, inside fp16's range.
  std::vector<float> upstream(uint32_t rows, uint32_t cols) const {
    return random_values(size_t(rows) * cols, -0.5f, 1.5f, fmt());
  }
};

TEST_P(BiasChunks, BackwardAccumulates) {
  for (auto [rows, cols] : kShapes) {
    SCOPED_TRACE(::testing::Message() << rows << " x " << cols);
    std::vector<float> dy = upstream(rows, cols), db = random_values(cols, 0, 4, fmt());
    EXPECT_TRUE(close_to(column_sums_on_device(fmt(), dy, rows, cols, &db), column_sums(dy, cols, &db),
                         column_sum_bound_for(fmt(), rows)));
  }
}

// The chunks' partials are added in a fixed order, never by atomics.
TEST_P(BiasChunks, SameBitsEveryRun) {
  for (auto [rows, cols] : kShapes) {
    SCOPED_TRACE(::testing::Message() << rows << " x " << cols);
    std::vector<float> dy = upstream(rows, cols), db = random_values(cols, 0, 4, fmt());
    std::vector<float> first = column_sums_on_device(fmt(), dy, rows, cols, &db);
    std::vector<float> second = column_sums_on_device(fmt(), dy, rows, cols, &db);
    EXPECT_EQ(0, std::memcmp(first.data(), second.data(), first.size() * sizeof(float)));
  }
}

INSTANTIATE_TEST_SUITE_P(Shaders, BiasChunks, ::testing::ValuesIn(kAllFormats),
                         [](const ::testing::TestParamInfo<Format>& info) {
                           return std::string(format_name(info.param)) + "_chunks";
                         });

// Mesa's llvmpipe stops any shader loop after 65,535 iterations (found
// with the LayerNorm parameter gradients): a column sum over more rows than
// that must still see every row. 69,632 rows of 0.25 sum to 17,408 exactly
// in fp32, fp16 and bf16 alike.
TEST_F(GpuTest, BiasBackwardSumsPastTheDriversLoopLimit) {
  const uint32_t rows = 65536 + 4096, cols = 3;
  for (Format f : {Format::F32, Format::F16, Format::BF16}) {
    std::vector<float> dy(size_t(rows) * cols, 0.25f);
    Buffer dyb = upload(ctx(), f, dy);
    Buffer dbb(ctx(), cols * format_bytes(f));
    dbb.fill(0x7FC07FC0u);  // NaN in every format: each column must be written
    Sequence seq(ctx());
    seq.begin();
    ops::bias_add_backward(seq, f, dyb, dbb, rows, cols, false);
    seq.end();
    seq.run();
    for (float v : download(dbb, f, cols)) EXPECT_EQ(v, 17408.0f) << format_name(f);
    Sequence again(ctx());  // and added into db: the chunks' sum plus db, rounded once
    again.begin();
    ops::bias_add_backward(again, f, dyb, dbb, rows, cols, true);
    again.end();
    again.run();
    for (float v : download(dbb, f, cols)) EXPECT_EQ(v, 34816.0f) << format_name(f) << ", accumulated";
  }
}

}  // namespace
}  // namespace vkamp::test
