// Losses against references in double: softmax cross-entropy (per-row and
// mean loss, gradient times a loss scale read from a GPU buffer) at 2, 10 and
// 33 classes, and MSE (mean loss, scaled gradient); a label out of range or a
// NaN or +inf logit makes that row NaN; rows that are no targets (a
// prompt's) count nowhere; both gradients against central differences of
// the F32 forward.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <span>

#include "support/cases.hpp"
#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "xent_reference.hpp"
#include "vkamp/data/host_data.hpp"
#include "vkamp/ops/losses.hpp"
#include "vkamp/ops/reduce.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

constexpr uint32_t kClasses[] = {2, 10, 33};
// 1, a typical scale, and 2^127, the largest that PyTorch's rule can reach:
// the 16-bit formats overflow to inf, fp32 must not overflow on the way.
const float kScales[] = {1.0f, 1024.0f, std::ldexp(1.0f, 127)};

// The reference as the format stores it: values past its range are inf
// (finite values stay exact).
std::vector<double> stored(Format fmt, std::vector<double> ref) {
  for (double& v : ref)
    if (std::isinf(round_reference(fmt, v))) v = round_reference(fmt, v);
  return ref;
}

// An error of a few fp32 ulps of `scale` in each element, in ulps of the
// reference's rms: what a difference of O(scale) numbers costs in the NMSE.
double ulps_of(double ulps, double scale, std::span<const double> ref) {
  double sum = 0;
  size_t count = 0;
  for (double r : ref)
    if (std::isfinite(r)) sum += r * r, ++count;
  double rms = count ? std::sqrt(sum / double(count)) : 0;
  return rms > 0 ? ulps * std::max(1.0, scale / rms) : ulps;
}

// The gradient against `fd`, a central difference of the loss along the
// step actually taken (plus - minus), relative to |step| times `norm`, the
// size the gradient is measured against.
template <class Grad>
double directional_error(const Grad& grad, double norm, const std::vector<float>& plus,
                         const std::vector<float>& minus, double fd) {
  double dot = 0, step_norm = 0;
  for (size_t i = 0; i < grad.size(); ++i) {
    double step = double(plus[i]) - minus[i];
    dot += grad[i] * step;
    step_norm += step * step;
  }
  return (dot - fd) * (dot - fd) / (norm * norm * step_norm);
}

// x +- h v, with |v| in [0.5, 1) and either sign, so that the step cannot vanish.
std::pair<std::vector<float>, std::vector<float>> central_points(const std::vector<float>& x, double h) {
  std::vector<float> v = random_values(x.size(), 0.5f, 1, Format::F32), plus(x.size()), minus(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double step = h * (std::bernoulli_distribution()(rng()) ? v[i] : -v[i]);
    plus[i] = float(x[i] + step);
    minus[i] = float(x[i] - step);
  }
  return {plus, minus};
}

double max_abs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::isfinite(x) ? std::max(m, double(std::abs(x))) : m;
  return m;
}

class Losses : public GpuTestP<FormatSize> {
 protected:
  Format fmt() const { return std::get<0>(GetParam()); }
  uint32_t rows() const { return std::get<1>(GetParam()); }

  std::vector<uint32_t> random_labels(uint32_t classes) {
    std::vector<uint32_t> labels(rows());
    for (uint32_t& l : labels) l = std::uniform_int_distribution<uint32_t>(0, classes - 1)(rng());
    return labels;
  }

  XentOf<float> xent(Format f, const std::vector<float>& logits, const std::vector<uint32_t>& labels,
                     uint32_t classes, float scale) {
    return run_xent(ctx(), f, logits, labels, classes, scale);
  }

  void expect_xent(const std::vector<float>& logits, const std::vector<uint32_t>& labels, uint32_t classes,
                   float scale) {
    SCOPED_TRACE(::testing::Message() << classes << " classes, scale " << scale);
    XentOf<float> got = xent(fmt(), logits, labels, classes, scale);
    Xent want = xent_reference(logits, labels, classes, scale);
    // The loss lse - z[label] is a difference of numbers of about max|z| +
    // log(classes): exp, log and the sums keep that to a few fp32 ulps; 8.
    double z_scale = max_abs(logits) + std::log(double(classes));
    double row_ulps = ulps_of(8, z_scale, want.row_loss);
    EXPECT_TRUE(close_to(got.row_loss, want.row_loss, nmse_bound(Format::F32, row_ulps)));
    // The mean adds an fp32 sum of same-signed terms: 32 ulps, as in sum_f32.
    std::vector<double> mean{want.loss};
    double mean_ulps = 32 + ulps_of(8, z_scale, mean);
    EXPECT_TRUE(close_to(std::vector<float>{got.loss}, mean, nmse_bound(Format::F32, mean_ulps)));
    // softmax - onehot is within a few fp32 ulps of the scale / rows factor (8),
    // then rounded once to the format (1 ulp).
    std::vector<double> dz = stored(fmt(), want.dlogits);
    const auto targets = std::count_if(labels.begin(), labels.end(), [](uint32_t l) { return !(l & data::kNotTarget); });
    double dz_ulps = ulps_of(8, scale / double(std::max<ptrdiff_t>(targets, 1)), dz);
    EXPECT_TRUE(close_to(got.dlogits, dz, nmse_bound(fmt(), 1) + nmse_bound(Format::F32, dz_ulps)));
    // A row that is no target is exactly 0, which the NMSE alone would not show.
    for (uint32_t r = 0; r < rows(); ++r)
      if (labels[r] & data::kNotTarget) {
        ASSERT_EQ(got.row_loss[r], 0.0f) << "row " << r;
        for (uint32_t c = 0; c < classes; ++c) ASSERT_EQ(got.dlogits[size_t(r) * classes + c], 0.0f) << "row " << r;
      }
  }

  // MSE forward and backward on the GPU: {loss, dy...}.
  std::pair<float, std::vector<float>> mse(Format f, const std::vector<float>& y, const std::vector<float>& t,
                                           float scale) {
    uint32_t n = uint32_t(y.size());
    Buffer yb = upload(ctx(), f, y), tb = upload(ctx(), f, t);
    Buffer s = upload(ctx(), Format::F32, std::vector<float>{scale});
    Buffer scratch(ctx(), ops::reduce_scratch_bytes(n));
    Buffer loss = poisoned(ctx(), Format::F32, 1), dy = poisoned(ctx(), f, n);
    Sequence seq(ctx());
    seq.begin();
    ops::mse_forward(seq, f, yb, tb, scratch, loss, n);
    ops::mse_backward(seq, f, yb, tb, s, dy, n);
    seq.end();
    seq.run();
    return {download(loss, Format::F32, 1)[0], download(dy, f, n)};
  }

  void expect_mse(const std::vector<float>& y, const std::vector<float>& t, float scale) {
    SCOPED_TRACE(::testing::Message() << "scale " << scale);
    auto [loss, dy] = mse(fmt(), y, t, scale);
    double n = double(y.size()), sum = 0;
    std::vector<double> want(y.size());
    for (size_t i = 0; i < y.size(); ++i) {
      double d = double(y[i]) - t[i];
      sum += d * d;
      want[i] = 2 * d / n * scale;
    }
    // An fp32 sum of same-signed squares, as in sum_squares: 32 ulps.
    std::vector<double> mean{sum * float(1 / n)};  // the factor the op passes, 1 / n in fp32
    EXPECT_TRUE(close_to(std::vector<float>{loss}, mean, nmse_bound(Format::F32, 32)));
    // y - t, the factor and the product round in fp32 (3 ulps), then the store (1 ulp).
    EXPECT_TRUE(close_to(dy, stored(fmt(), want), nmse_bound(fmt(), 1) + nmse_bound(Format::F32, 3)));
  }
};

TEST_P(Losses, SoftmaxCrossEntropy) {
  for (uint32_t classes : kClasses)
    for (float scale : kScales)
      expect_xent(random_values(size_t(rows()) * classes, -4, 4, fmt()), random_labels(classes), classes, scale);
}

TEST_P(Losses, SoftmaxCrossEntropyLargeLogits) {
  // exp(90) is past fp32's range: only the max-shifted form stays finite.
  for (uint32_t classes : kClasses)
    expect_xent(random_values(size_t(rows()) * classes, 90, 98, fmt()), random_labels(classes), classes, 1);
}

TEST_P(Losses, SoftmaxCrossEntropyLabelOutOfRange) {
  for (uint32_t classes : kClasses) {
    std::vector<uint32_t> labels = random_labels(classes);
    labels[std::uniform_int_distribution<uint32_t>(0, rows() - 1)(rng())] = classes;
    labels[std::uniform_int_distribution<uint32_t>(0, rows() - 1)(rng())] = data::kNotTarget - 1;
    // That row's loss and gradient are NaN, the mean too; other rows are untouched.
    expect_xent(random_values(size_t(rows()) * classes, -4, 4, fmt()), labels, classes, 1024);
  }
}

// Rows marked data::kNotTarget (a prompt's tokens) add nothing: loss 0,
// gradient 0, the mean over the others; even a NaN logit or an id out of
// range there is never read. With no target at all the loss is 0.
TEST_P(Losses, SoftmaxCrossEntropyRowsThatAreNoTargets) {
  for (uint32_t classes : kClasses) {
    for (double share : {0.5, 1.0}) {
      SCOPED_TRACE(::testing::Message() << share << " of the rows no targets");
      std::vector<float> logits = random_values(size_t(rows()) * classes, -4, 4, fmt());
      std::vector<uint32_t> labels = random_labels(classes);
      for (uint32_t r = 0; r < rows(); ++r)
        if (std::bernoulli_distribution(share)(rng())) {
          labels[r] |= data::kNotTarget;
          if (std::bernoulli_distribution(0.5)(rng())) logits[size_t(r) * classes] = kNan;
          if (std::bernoulli_distribution(0.5)(rng())) labels[r] = 0xFFFFFFFFu;
        }
      expect_xent(logits, labels, classes, 1024);
    }
  }
}

TEST_P(Losses, SoftmaxCrossEntropyNanAndInfLogits) {
  // NaN or +inf anywhere in a row: that row is NaN. -inf is a probability of
  // 0: an ordinary row, unless it is the label's logit (loss +inf).
  for (uint32_t classes : kClasses) {
    for (float special : {kNan, kInf, -kInf}) {
      for (bool at_label : {false, true}) {
        SCOPED_TRACE(::testing::Message() << special << (at_label ? " at the label" : " off the label"));
        std::vector<float> logits = random_values(size_t(rows()) * classes, -4, 4, fmt());
        std::vector<uint32_t> labels = random_labels(classes);
        uint32_t r = std::uniform_int_distribution<uint32_t>(0, rows() - 1)(rng());
        uint32_t c = at_label ? labels[r] : (labels[r] + 1) % classes;
        logits[size_t(r) * classes + c] = special;
        expect_xent(logits, labels, classes, 1);
      }
    }
  }
}

TEST_P(Losses, SoftmaxCrossEntropyGradientCheck) {
  // The mean loss from the F32 forward's per-row losses at z +- h v against
  // <dz, step> from the backward (scale 1) in the format under test.
  const double h = 1e-2;
  for (uint32_t classes : kClasses) {
    SCOPED_TRACE(::testing::Message() << classes << " classes");
    std::vector<float> z = random_values(size_t(rows()) * classes, -4, 4, fmt());
    std::vector<uint32_t> labels = random_labels(classes);
    for (uint32_t& l : labels)  // a quarter of the rows no targets (rows() > 1: at least one target)
      if (std::bernoulli_distribution(0.25)(rng()) && &l != &labels[0]) l |= data::kNotTarget;
    const double targets = double(
        std::count_if(labels.begin(), labels.end(), [](uint32_t l) { return !(l & data::kNotTarget); }));
    auto [plus, minus] = central_points(z, h);
    std::vector<float> lp = xent(Format::F32, plus, labels, classes, 1).row_loss;
    std::vector<float> lm = xent(Format::F32, minus, labels, classes, 1).row_loss;
    double fd = 0;
    for (uint32_t r = 0; r < rows(); ++r) fd += (double(lp[r]) - lm[r]) / targets;
    std::vector<float> dz = xent(fmt(), z, labels, classes, 1).dlogits;
    // Measured against the largest |dz| can be (each row of softmax - onehot
    // has norm <= sqrt 2, over the targets): dz itself vanishes on confident rows,
    // whose fp32 losses keep only an absolute accuracy. dz rounds once to the
    // format (1 ulp); truncation O(h^2) and the F32 losses' rounding over 2h
    // stay below 1e-5: allow 1e-8, far below any formula mistake.
    double norm = std::sqrt(2.0 / targets);
    EXPECT_LE(directional_error(dz, norm, plus, minus, fd), nmse_bound(fmt(), 1) + 1e-8) << "difference " << fd;
  }
}

TEST_P(Losses, Mse) {
  for (float scale : kScales)
    expect_mse(random_values(rows(), -2, 2, fmt()), random_values(rows(), -2, 2, fmt()), scale);
}

TEST_P(Losses, MseNanAndInf) {
  // A NaN or inf prediction reaches the loss and its own gradient only;
  // inf - inf is NaN.
  struct Case {
    float y, t;
  } cases[] = {{kNan, 1}, {1, kNan}, {kInf, 1}, {-kInf, 1}, {kInf, kInf}};
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "y " << c.y << ", t " << c.t);
    std::vector<float> y = random_values(rows(), -2, 2, fmt()), t = random_values(rows(), -2, 2, fmt());
    size_t k = std::uniform_int_distribution<size_t>(0, rows() - 1)(rng());
    y[k] = c.y;
    t[k] = c.t;
    expect_mse(y, t, 1024);
  }
}

TEST_P(Losses, MseGradientCheck) {
  // L is quadratic, so central differences have no truncation error and a
  // large step only helps: the F32 forward at y +- h v against <dy, step>.
  std::vector<float> y = random_values(rows(), -2, 2, fmt()), t = random_values(rows(), -2, 2, fmt());
  auto [plus, minus] = central_points(y, 0.25);
  double fd = double(mse(Format::F32, plus, t, 1).first) - mse(Format::F32, minus, t, 1).first;
  std::vector<float> dy = mse(fmt(), y, t, 1).second;
  double norm = std::sqrt(std::inner_product(dy.begin(), dy.end(), dy.begin(), 0.0));
  // Relative to |dy| |step|: dy rounds once to the format (1 ulp); the F32
  // losses are within 32 fp32 ulps (the sum), a few 1e-6 of it over 2h: allow 1e-8.
  EXPECT_LE(directional_error(dy, norm, plus, minus, fd), nmse_bound(fmt(), 1) + 1e-8) << "difference " << fd;
}

INSTANTIATE_TEST_SUITE_P(Shaders, Losses, all_formats_and_sizes(), format_size_name);

}  // namespace
}  // namespace vkamp::test
