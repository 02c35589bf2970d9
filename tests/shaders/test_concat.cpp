// Concatenation along the feature axis and its backward (slices of dy,
// written or added), against a reference at every rows x cols pair from
// the awkward sizes (the second input 3 columns wide), into poisoned
// outputs; a copy is exact, so inf and NaN pass through unchanged.
#include <cmath>
#include <limits>

#include "support/cases.hpp"
#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "vkamp/ops/concat.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

constexpr uint32_t kSecond = 3;  // columns of the second input

class Concat : public MatrixShaderTest {
 protected:
  // With some inf and NaN among the values: a copy must keep them.
  std::vector<float> values(uint32_t cols) {
    auto v = random_values(size_t(rows()) * cols, -4, 4, fmt());
    v[0] = kNan;
    v[v.size() - 1] = v.size() > 1 ? kInf : kNan;
    return v;
  }

  std::vector<double> joined(const std::vector<float>& a, uint32_t ca, const std::vector<float>& b) {
    std::vector<double> y;
    for (uint32_t r = 0; r < rows(); ++r) {
      y.insert(y.end(), a.begin() + size_t(r) * ca, a.begin() + size_t(r + 1) * ca);
      y.insert(y.end(), b.begin() + size_t(r) * kSecond, b.begin() + size_t(r + 1) * kSecond);
    }
    return y;
  }

  // Column block [from, from + cols) of dy (rows x total), plus dx when given.
  std::vector<double> slice(const std::vector<float>& dy, uint32_t total, uint32_t from, uint32_t cols,
                            const std::vector<float>* dx) {
    std::vector<double> s;
    for (uint32_t r = 0; r < rows(); ++r)
      for (uint32_t c = 0; c < cols; ++c) {
        double v = dy[size_t(r) * total + from + c];
        s.push_back(dx ? round_reference(fmt(), v + (*dx)[s.size()]) : v);
      }
    return s;
  }
};

TEST_P(Concat, Forward) {
  for_each_cols([&](uint32_t cols) {
    auto a = values(cols), b = values(kSecond);
    Buffer ab = upload(ctx(), fmt(), a), bb = upload(ctx(), fmt(), b);
    Buffer y = poisoned(ctx(), fmt(), size_t(rows()) * (cols + kSecond));
    Sequence seq(ctx());
    seq.begin();
    ops::concat_forward(seq, fmt(), {{ab, cols}, {bb, kSecond}}, y, rows());
    seq.end();
    seq.run();
    EXPECT_TRUE(close_to(download(y, fmt(), size_t(rows()) * (cols + kSecond)), joined(a, cols, b), 0.0));
  });
}

TEST_P(Concat, BackwardWritesAndAccumulates) {
  for_each_cols([&](uint32_t cols) {
    const uint32_t total = cols + kSecond;
    auto dy = values(total);
    auto db_before = random_values(size_t(rows()) * kSecond, 1, 3, fmt());
    Buffer dyb = upload(ctx(), fmt(), dy), da = poisoned(ctx(), fmt(), size_t(rows()) * cols);
    Buffer db = upload(ctx(), fmt(), db_before);
    Sequence seq(ctx());
    seq.begin();
    ops::concat_backward(seq, fmt(), dyb, {{da, cols, false}, {db, kSecond, true}}, rows());
    seq.end();
    seq.run();
    EXPECT_TRUE(close_to(download(da, fmt(), size_t(rows()) * cols), slice(dy, total, 0, cols, nullptr), 0.0));
    // One rounding of each sum: 1 ulp.
    EXPECT_TRUE(close_to(download(db, fmt(), size_t(rows()) * kSecond), slice(dy, total, cols, kSecond, &db_before),
                         nmse_bound(fmt(), 1)));
  });
}

TEST_P(Concat, BackwardSkipsAnInputWithoutGradient) {
  for_each_cols([&](uint32_t cols) {
    const uint32_t total = cols + kSecond;
    auto dy = values(total);
    Buffer dyb = upload(ctx(), fmt(), dy), db = poisoned(ctx(), fmt(), size_t(rows()) * kSecond);
    Buffer untouched = upload(ctx(), fmt(), std::vector<float>(size_t(rows()) * cols, 1.0f));
    Sequence seq(ctx());
    seq.begin();
    ops::concat_backward(seq, fmt(), dyb, {{untouched, cols, false, true}, {db, kSecond}}, rows());
    seq.end();
    seq.run();
    EXPECT_TRUE(close_to(download(db, fmt(), size_t(rows()) * kSecond), slice(dy, total, cols, kSecond, nullptr), 0.0));
    for (float v : download(untouched, fmt(), size_t(rows()) * cols)) ASSERT_EQ(v, 1.0f);
  });
}

INSTANTIATE_TEST_SUITE_P(Shaders, Concat, all_formats_and_sizes(), format_size_name);

}  // namespace
}  // namespace vkamp::test
