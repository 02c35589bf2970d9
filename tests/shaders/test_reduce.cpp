// Reductions: sum_squares (with and without a target) and sum_f32 against
// sums in double, writing factor * sum into out[out_index] and nothing else;
// inf and NaN inputs reach the result; and the fixed order gives the same
// bits on every run.
#include <bit>
#include <cmath>
#include <deque>
#include <limits>

#include "support/cases.hpp"
#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "vkamp/ops/reduce.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

// Results go to one slot of a few; the others must keep their poison.
constexpr uint32_t kSlots = 4;

// Sums of at most a million same-signed fp32 terms, in a tree of depth about
// 20 (a few per thread, 256 per workgroup, then the partials): the relative
// error stays within about 20 fp32 roundings; allow 32 ulps.
const double kSumBound = nmse_bound(Format::F32, 32);

// More than one element per thread in stage one (at most 1024 x 256 threads).
uint32_t strided_size(uint32_t n) { return 2 * 1024 * 256 + n; }

double sum_of_squares(const std::vector<float>& x, const std::vector<float>* t) {
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double d = double(x[i]) - (t ? double((*t)[i]) : 0.0);
    s += d * d;
  }
  return s;
}

double sum(const std::vector<float>& x) {
  double s = 0;
  for (float v : x) s += v;
  return s;
}

class Reduce : public GpuTestP<FormatSize> {
 protected:
  Format fmt() const { return std::get<0>(GetParam()); }
  uint32_t n() const { return std::get<1>(GetParam()); }

  // Records the reduction into `seq` (writing out[index]) and returns the
  // output buffer; inputs live as long as the fixture.
  const Buffer& record(Sequence& seq, const std::vector<float>& x, const std::vector<float>* t, bool squares,
                       uint32_t index, float factor) {
    uint32_t count = uint32_t(x.size());
    Buffer& xb = keep(upload(ctx(), squares ? fmt() : Format::F32, x));
    Buffer& out = keep(poisoned(ctx(), Format::F32, kSlots));
    if (squares) {
      Buffer& scratch = keep(Buffer(ctx(), ops::reduce_scratch_bytes(count)));
      BufferView tv = t ? BufferView(keep(upload(ctx(), fmt(), *t))) : BufferView(xb);
      ops::sum_squares(seq, fmt(), xb, t ? &tv : nullptr, count, scratch, out, index, factor);
    } else {
      ops::sum_f32(seq, xb, count, out, index, factor);
    }
    return out;
  }

  // Runs one reduction; returns out[index], having checked the other slots.
  float reduce(const std::vector<float>& x, const std::vector<float>* t, bool squares, uint32_t index = 0,
               float factor = 1) {
    Sequence seq(ctx());
    seq.begin();
    const Buffer& out = record(seq, x, t, squares, index, factor);
    seq.end();
    seq.run();
    auto bits = out.read<uint32_t>();
    for (uint32_t i = 0; i < kSlots; ++i)
      EXPECT_TRUE(i == index || bits[i] == kPoison) << "slot " << i << " written; the result goes to " << index;
    return std::bit_cast<float>(bits[index]);
  }

  ::testing::AssertionResult matches(float got, double want, double bound = kSumBound) {
    return close_to(std::vector<float>{got}, std::vector<double>{want}, bound);
  }

 private:
  Buffer& keep(Buffer b) { return buffers_.emplace_back(std::move(b)); }
  std::deque<Buffer> buffers_;
};

TEST_P(Reduce, SumSquares) {
  std::vector<float> x = random_values(n(), -2, 2, fmt());
  EXPECT_TRUE(matches(reduce(x, nullptr, true), sum_of_squares(x, nullptr)));
}

TEST_P(Reduce, SumSquaresWithTarget) {
  std::vector<float> x = random_values(n(), -2, 2, fmt()), t = random_values(n(), -2, 2, fmt());
  EXPECT_TRUE(matches(reduce(x, &t, true), sum_of_squares(x, &t)));
}

TEST_P(Reduce, SumSquaresManyElementsPerThread) {
  std::vector<float> x = random_values(strided_size(n()), -2, 2, fmt()), t = random_values(x.size(), -2, 2, fmt());
  EXPECT_TRUE(matches(reduce(x, &t, true), sum_of_squares(x, &t)));
}

TEST_P(Reduce, SumSquaresOutIndexAndFactor) {
  std::vector<float> x = random_values(n(), -2, 2, fmt()), t = random_values(n(), -2, 2, fmt());
  float mean = 1.0f / float(n());
  EXPECT_TRUE(matches(reduce(x, &t, true, 2, mean), sum_of_squares(x, &t) * mean));
  EXPECT_TRUE(matches(reduce(x, nullptr, true, 3, -0.37f), sum_of_squares(x, nullptr) * -0.37f));
}

TEST_P(Reduce, SumSquaresOfInfAndNan) {
  // One special element at a random place; x - t is NaN for inf - inf.
  struct Case {
    float x, t;
  } cases[] = {{kInf, 1}, {-kInf, 1}, {kNan, 1}, {1, kNan}, {kInf, kInf}, {-kInf, kInf},
               // Squares past fp32's range are inf (bf16, fp32), never a wrapped finite value.
               {float(format_max(fmt())), 0}};
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "x " << c.x << ", t " << c.t);
    std::vector<float> x = random_values(n(), -2, 2, fmt()), t = random_values(n(), -2, 2, fmt());
    size_t k = std::uniform_int_distribution<size_t>(0, n() - 1)(rng());
    x[k] = c.x;
    t[k] = c.t;
    EXPECT_TRUE(matches(reduce(x, &t, true), round_reference(Format::F32, sum_of_squares(x, &t))));
  }
}

TEST_P(Reduce, SameBitsEveryRun) {
  // Signed terms, so that any change of order would show in the low bits.
  std::vector<float> x = random_values(strided_size(n()), -2, 2, fmt()), t = random_values(x.size(), -2, 2, fmt());
  std::vector<float> y = random_values(x.size(), -1, 1, Format::F32);
  auto bits = [](const Buffer& b) { return b.read<uint32_t>(); };
  Sequence seq(ctx());
  seq.begin();
  const Buffer& squares = record(seq, x, &t, true, 0, 1);
  const Buffer& sums = record(seq, y, nullptr, false, 1, 1);
  seq.end();
  seq.run();
  auto first_squares = bits(squares), first_sums = bits(sums);
  seq.run();  // the same recording again
  EXPECT_EQ(bits(squares), first_squares);
  EXPECT_EQ(bits(sums), first_sums);
  EXPECT_EQ(std::bit_cast<uint32_t>(reduce(x, &t, true)), first_squares[0]);  // a fresh recording
  EXPECT_EQ(std::bit_cast<uint32_t>(reduce(y, nullptr, false, 1)), first_sums[1]);
}

INSTANTIATE_TEST_SUITE_P(Shaders, Reduce, all_formats_and_sizes(), format_size_name);

// sum_f32 reads fp32 whatever the training format: one format, every size.
class SumF32 : public Reduce {};

TEST_P(SumF32, Sums) {
  // Same-signed terms: the error bound is relative to the sum itself.
  std::vector<float> x = random_values(n(), 0.1f, 1, Format::F32);
  EXPECT_TRUE(matches(reduce(x, nullptr, false), sum(x)));
  std::vector<float> many = random_values(4096 + n(), 0.1f, 1, Format::F32);
  EXPECT_TRUE(matches(reduce(many, nullptr, false), sum(many)));
}

TEST_P(SumF32, OutIndexAndFactor) {
  std::vector<float> x = random_values(n(), 0.1f, 1, Format::F32);
  EXPECT_TRUE(matches(reduce(x, nullptr, false, 3, 1.0f / float(n())), sum(x) * (1.0f / float(n()))));
  EXPECT_TRUE(matches(reduce(x, nullptr, false, 1, -2.5f), sum(x) * -2.5));
}

TEST_P(SumF32, InfAndNan) {
  const std::vector<std::vector<float>> cases = {{kInf}, {-kInf}, {kNan}, {kInf, -kInf}, {kNan, kInf}};
  for (const auto& specials : cases) {
    if (specials.size() > n()) continue;
    SCOPED_TRACE(::testing::Message() << "first special " << specials[0] << " of " << specials.size());
    std::vector<float> x = random_values(n(), 0.1f, 1, Format::F32);
    size_t k = std::uniform_int_distribution<size_t>(0, n() - 1)(rng());
    for (size_t j = 0; j < specials.size(); ++j) x[(k + j) % n()] = specials[j];
    EXPECT_TRUE(matches(reduce(x, nullptr, false), sum(x)));
  }
}

INSTANTIATE_TEST_SUITE_P(Shaders, SumF32,
                         ::testing::Combine(::testing::Values(Format::F32), ::testing::ValuesIn(kSizes)),
                         format_size_name);

}  // namespace
}  // namespace vkamp::test
