// dropout: the host's Philox4x32-10 against Random123's known answers; the
// shader's keeps against the host's draws bit for bit, and its values
// against the definition PyTorch's native_dropout computes (input * mask *
// scale: a kept x is x * float(1/(1-p)), one fp32 product rounded once to
// the format; a dropped one x * 0, so NaN for an inf or NaN x), in every
// format at the awkward sizes, subnormals included; p = 0 is the identity;
// the draws change with the step, the stream and the salt (and the step is
// read on the GPU); and, since no two generators' masks agree, PyTorch's
// moments: over 2^20 draws the keep rate, and the outputs' mean and
// variance, E[y] = x and Var[y] = x^2 p/(1-p), within binomial bounds.
#include <cmath>
#include <limits>

#include "support/cases.hpp"
#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "support/philox.hpp"
#include "support/reference.hpp"
#include "vkamp/ops/dropout.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

// Random123's kat_vectors, "philox4x32 10" lines: counter, key, result.
TEST(Philox, MatchesRandom123KnownAnswers) {
  using W4 = std::array<uint32_t, 4>;
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}), (W4{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}), (W4{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (W4{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

struct Draw {
  uint64_t seed = 0;
  uint32_t step = 0, stream = 0, salt = 0;
};

Draw random_draw() {
  std::uniform_int_distribution<uint32_t> u32;
  return {rng()(), u32(rng()), u32(rng()), u32(rng())};
}

// Runs ops::dropout over x (fmt) into a poisoned y; the step number sits at
// word 2 of a small counter buffer, as TrainState.step sits inside its struct.
std::vector<float> run_dropout(Format fmt, const std::vector<float>& x, double p, const Draw& d) {
  Buffer xb = upload(ctx(), fmt, x), yb = poisoned(ctx(), fmt, x.size());
  Buffer counter(ctx(), 16);
  counter.write(std::vector<uint32_t>{0xDEADBEEFu, 0xDEADBEEFu, d.step, 0xDEADBEEFu});
  Sequence seq(ctx());
  seq.begin();
  ops::dropout(seq, fmt, xb, yb, uint32_t(x.size()), p, {d.seed, &counter, 2, d.stream, d.salt});
  seq.end();
  seq.run();
  return download(yb, fmt, x.size());
}

// The definition, element by element: NaN where the result is NaN.
double expected(Format fmt, float x, bool keep, float scale) {
  if (!keep) return std::isfinite(x) ? 0.0 : std::nan("");
  if (std::isnan(x)) return std::nan("");
  return round_reference(fmt, double(x * scale));  // x * scale: the fp32 product, as the shader
}

// Vulkan requires fp32 products correctly rounded (and a lone product
// cannot be contracted), and the shader rounds to the format in integer
// code: the same bits as the reference, except that a driver may flush an
// fp32 subnormal (input or product) to zero. Zeros are compared by value: a
// driver without SignedZeroInfNanPreserve need not keep x * scale's sign.
::testing::AssertionResult matches(Format fmt, const std::vector<float>& x, const std::vector<float>& y, double p,
                                   const Draw& d) {
  const uint32_t threshold = ops::dropout_threshold(p);
  const float scale = ops::dropout_scale(p);
  const double kFlush = std::ldexp(1.0, -126) * scale;
  for (size_t i = 0; i < x.size(); ++i) {
    const bool keep = dropout_draw(d.seed, d.step, d.stream, d.salt, uint32_t(i)) >= threshold;
    const double want = expected(fmt, x[i], keep, scale);
    const bool same = std::isnan(want) ? std::isnan(y[i])
                                       : y[i] == want || (std::fabs(x[i]) < kFlush && keep && y[i] == 0);
    if (!same)
      return ::testing::AssertionFailure() << "element " << i << " of " << x.size() << ": x " << x[i] << ", "
                                           << (keep ? "kept" : "dropped") << ", got " << y[i] << ", want " << want;
  }
  return ::testing::AssertionSuccess();
}

class Dropout : public GpuTestP<FormatSize> {
 protected:
  Format fmt() const { return std::get<0>(GetParam()); }
  uint32_t n() const { return std::get<1>(GetParam()); }
};

TEST_P(Dropout, KeepsWhatTheHostDrawsAndScalesThem) {
  for (double p : {0.2, 0.5, 0.9}) {
    SCOPED_TRACE(::testing::Message() << "p " << p);
    std::vector<float> x = random_values(n(), -4, 4, fmt());
    // Every seventh value subnormal in the format (fp16's 2^-24 spacing,
    // bf16's and fp32's below 2^-126), and a few zeros.
    const double tiny = fmt() == Format::F16 ? std::ldexp(1.0, -24) : fmt() == Format::CB16 ? std::ldexp(1.0, -39)
                                                                                       : std::ldexp(1.0, -130);
    for (size_t i = 3; i < x.size(); i += 7) x[i] = round_to(fmt(), float(tiny * double(i % 5)));
    const Draw d = random_draw();
    EXPECT_TRUE(matches(fmt(), x, run_dropout(fmt(), x, p, d), p, d));
  }
}

TEST_P(Dropout, NonFiniteValuesAsPytorchsMaskProduct) {
  // Kept: inf stays inf with its sign, NaN stays NaN. Dropped: inf * 0 and
  // NaN * 0 are NaN (PyTorch gives the same), a finite x gives 0.
  const float specials[] = {kInf, -kInf, kNan, 0.0f, -0.0f};
  std::vector<float> x = random_values(n(), -4, 4, fmt());
  for (size_t i = 0; i < x.size(); i += 2) x[i] = specials[(i / 2) % std::size(specials)];
  const Draw d = random_draw();
  EXPECT_TRUE(matches(fmt(), x, run_dropout(fmt(), x, 0.5, d), 0.5, d));
}

TEST_P(Dropout, ZeroProbabilityIsTheIdentity) {
  std::vector<float> x = random_values(n(), -1000, 1000, fmt());
  const std::vector<float> y = run_dropout(fmt(), x, 0.0, random_draw());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], x[i]) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(Shaders, Dropout, all_formats_and_sizes(), format_size_name);

class DropoutDraws : public GpuTest {};

// The fraction of 4096 elements whose keep agrees between two draws at p =
// 1/2: independent draws agree half the time (binomial, sd 1/128), the
// same draw always.
double agreement(const Draw& a, const Draw& b) {
  const std::vector<float> ones(4096, 1.0f);
  const std::vector<float> ya = run_dropout(Format::F32, ones, 0.5, a), yb = run_dropout(Format::F32, ones, 0.5, b);
  size_t same = 0;
  for (size_t i = 0; i < ones.size(); ++i) same += (ya[i] == 0) == (yb[i] == 0);
  return double(same) / double(ones.size());
}

TEST_F(DropoutDraws, DifferWithTheStepTheStreamAndTheSalt) {
  const Draw d = random_draw();
  EXPECT_EQ(agreement(d, d), 1.0) << "the same counter and key draw the same keeps";
  // 6 standard deviations (1/128 each): a false failure about once in 5e8.
  const double bound = 6.0 / 128;
  for (int which = 0; which < 4; ++which) {
    Draw e = d;
    if (which == 0) e.step += 1;
    if (which == 1) e.stream += 1;
    if (which == 2) e.salt += 1;
    if (which == 3) e.seed += 1ull << 32;  // the key's high word
    EXPECT_NEAR(agreement(d, e), 0.5, bound) << "changing part " << which;
  }
}

// PyTorch's nn.Dropout: E[y] = x, Var[y] = x^2 p/(1-p). Over n = 2^20
// values all equal to c, the keep count K is binomial(n, q) with q the
// keep probability (1 - threshold/2^32), and y = c * scale * B: the sample
// mean has sd sqrt(Var/n), the sample variance sd sqrt((mu4 - Var^2)/n)
// (mu4 = (c scale)^4 q(1-q)(1 - 3q + 3q^2), the Bernoulli's fourth central
// moment) plus the mean's part below. Each is checked to 6 sd: a false
// failure about once in 5e8.
TEST_F(DropoutDraws, KeepRateMeanAndVarianceAreTorchs) {
  const uint32_t n = 1u << 20;
  const float c = 1.5f;
  const std::vector<float> x(n, c);
  for (double p : {0.1, 0.2, 0.5}) {
    SCOPED_TRACE(::testing::Message() << "p " << p);
    const std::vector<float> y = run_dropout(Format::F32, x, p, random_draw());
    const double q = 1.0 - ops::dropout_threshold(p) / 4294967296.0;
    const double v = double(c) * ops::dropout_scale(p);  // a kept value (exact in double)
    double kept = 0, sum = 0;
    for (float e : y) {
      kept += e != 0;
      sum += e;
    }
    const double mean = sum / n;
    double ss = 0;
    for (float e : y) ss += (e - mean) * (e - mean);
    const double var = ss / (n - 1);
    const double var_y = v * v * q * (1 - q), mu4 = std::pow(v, 4) * q * (1 - q) * (1 - 3 * q + 3 * q * q);
    EXPECT_NEAR(kept / n, q, 6 * std::sqrt(q * (1 - q) / n));
    EXPECT_NEAR(q, 1 - p, 1e-9) << "the threshold's rounding";
    // PyTorch's moments (with scale = 1/(1-p) exactly; float(scale) differs
    // by under 2^-24 relative, far inside the bounds).
    EXPECT_NEAR(mean, c, 6 * std::sqrt(var_y / n));
    // The sample variance about the sample mean is that about the true
    // mean less (mean - E[y])^2, at most (6 sd of the mean)^2 = 36 Var/n:
    // the whole of its error where mu4 = Var^2 (p = 1/2, a symmetric pair).
    EXPECT_NEAR(var, double(c) * c * p / (1 - p),
                6 * std::sqrt((mu4 - var_y * var_y) / n) + 36 * var_y / n + 1e-6 * var_y);
    for (float e : y) ASSERT_TRUE(e == 0 || e == float(v)) << "a value neither dropped nor c / (1 - p): " << e;
  }
}

}  // namespace
}  // namespace vkamp::test
