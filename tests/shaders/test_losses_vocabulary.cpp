// Softmax cross-entropy, its gradient, the mean over the targets and the
// evaluator's count of correct rows at the vocabularies real models have
// (Llama 2's 32,000, GPT-2's 50,257, Llama 3's 128,256, Qwen2's 151,936 and
// Gemma's 262,144), against the double reference, element by element with
// bounds derived below; rows that are no targets among them, and logits
// larger than one storage binding, read in chunks. A row of that length
// once ran on one invocation, and lavapipe leaves an invocation's loops
// after 65,535 iterations in all: every loss above 32,768 classes was wrong
// there while the small class counts of test_losses.cpp passed.
#include <algorithm>
#include <cmath>
#include <vector>

#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "xent_reference.hpp"
#include "vkamp/data/host_data.hpp"
#include "vkamp/ops/losses.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

constexpr uint32_t kVocabularies[] = {32000, 50257, 128256, 151936, 262144};
constexpr double kU32 = 0x1p-24;  // fp32's unit roundoff
// Logits in [-4, 4): exp's arguments v - max lie in [-8, 0], where Vulkan
// allows exp 3 + 2|x| ulps: 19.
constexpr float kLogitRange = 4;
constexpr double kExpUlps = 3 + 2 * 2 * kLogitRange;

// The fp32 additions in series behind one row's sum of exponentials: a row
// longer than 4096 classes is a 128-invocation workgroup's (ops/row_plan),
// each adding every 128th term, then a 7-level tree.
double sum_depth(uint32_t classes) { return std::ceil(classes / 128.0) + 7; }

class LossesVocabulary : public GpuTestP<Format> {
 protected:
  Format fmt() const { return GetParam(); }

  // Rows of random logits and labels; a third of the rows no targets, with
  // a NaN logit and an id out of range there that must never be read.
  void make(uint32_t rows, uint32_t classes, std::vector<float>& logits, std::vector<uint32_t>& labels) {
    logits = random_values(size_t(rows) * classes, -kLogitRange, kLogitRange, fmt());
    labels.resize(rows);
    for (uint32_t r = 0; r < rows; ++r) {
      labels[r] = std::uniform_int_distribution<uint32_t>(0, classes - 1)(rng());
      if (r % 3 == 2) {
        labels[r] = r % 2 ? 0xFFFFFFFFu : labels[r] | data::kNotTarget;
        logits[size_t(r) * classes + labels[r] % classes] = kNan;
      }
    }
  }

  // Every row's loss, the mean and every gradient element within bounds
  // derived from fp32's and the format's rounding.
  void expect_xent(uint32_t rows, uint32_t classes, float scale) {
    SCOPED_TRACE(::testing::Message() << rows << " rows of " << classes << " classes, scale " << scale);
    std::vector<float> logits;
    std::vector<uint32_t> labels;
    make(rows, classes, logits, labels);
    XentOf<float> got = run_xent(ctx(), fmt(), logits, labels, classes, scale);
    Xent want = xent_reference(logits, labels, classes, scale);
    const double targets = double(std::count_if(labels.begin(), labels.end(), [](uint32_t l) { return !(l & data::kNotTarget); }));
    const double n = sum_depth(classes);
    double mean_bound = 0, loss_sum = 0;
    for (uint32_t r = 0; r < rows; ++r) {
      if (labels[r] & data::kNotTarget) {
        ASSERT_EQ(got.row_loss[r], 0.0f) << "row " << r;
        for (uint32_t c = 0; c < classes; ++c) ASSERT_EQ(got.dlogits[size_t(r) * classes + c], 0.0f) << "row " << r;
        continue;
      }
      // The sum of exponentials errs by (19 + n) u relatively (each term's
      // exp, then n additions of positive terms), which log passes on as an
      // absolute error; log itself adds 3 ulps or 2^-21 near 1; max + log
      // and - z[label] round once each (2 u of their operands' size).
      const float* z = logits.data() + size_t(r) * classes;
      const double mx = *std::max_element(z, z + classes), lse_part = want.row_loss[r] + z[labels[r]] - mx;
      const double bound = (kExpUlps + n) * kU32 + 6 * kU32 * lse_part + 0x1p-21 +
                           4 * kU32 * (std::abs(mx) + lse_part + std::abs(z[labels[r]]));
      EXPECT_NEAR(got.row_loss[r], want.row_loss[r], bound) << "row " << r;
      mean_bound += bound / targets;
      loss_sum += std::abs(want.row_loss[r]) / targets;
      // The gradient: prob = exp / sum errs by (19 + n + 3) u relatively
      // (the division 2.5 ulps), prob - onehot and the factor scale /
      // targets round in fp32, then one rounding to the format, relative
      // above its normal range and absolute below it.
      const double k = double(scale) / targets;
      for (uint32_t c = 0; c < classes; ++c) {
        const size_t i = size_t(r) * classes + c;
        const double g = want.dlogits[i], prob = g / k + (c == labels[r]);
        const double e = k * ((kExpUlps + n + 4) * kU32 * prob + 3 * kU32 * std::abs(g / k)) +
                         unit_roundoff(fmt()) * std::abs(g) + smallest_normal(fmt());
        if (!(std::abs(got.dlogits[i] - g) <= e)) {
          ADD_FAILURE() << "dlogits[" << r << ", " << c << "] = " << got.dlogits[i] << ", want " << g << " +- " << e;
          return;
        }
      }
    }
    // The mean: the per-row bounds, plus an fp32 sum over 256 lanes and a
    // tree of 8 levels (rows + 8 additions of positive terms) and the division.
    EXPECT_NEAR(got.loss, want.loss, mean_bound + (rows + 10) * kU32 * loss_sum);
  }
};

TEST_P(LossesVocabulary, SoftmaxCrossEntropyAndGradient) {
  for (uint32_t classes : kVocabularies)
    for (float scale : {1.0f, 1024.0f}) expect_xent(6, classes, scale);
}

// More rows than one binding holds (lavapipe's and Adreno's 128 MiB: 220
// rows of Qwen2's vocabulary in fp32, 441 in 16 bits): the ops read them
// as chunks of the one buffer, each view within the limit.
TEST_P(LossesVocabulary, LogitsLargerThanOneBinding) {
  const uint32_t classes = 151936;
  const uint64_t row_bytes = uint64_t(classes) * format_bytes(fmt());
  const uint64_t per_binding = ctx().info().max_storage_range / row_bytes;
  if (per_binding > 600)
    GTEST_SKIP() << "this device binds " << ctx().info().max_storage_range << " bytes: " << per_binding
                 << " rows fit one binding, too many for a test";
  expect_xent(uint32_t(per_binding) + 5, classes, 1024);
}

// The evaluator's count of rows whose arg-max is the label (the lowest
// class on a tie), against the host's: exact. Rows labelled with their
// arg-max, some tied at a later class too, one with a NaN at it; others
// with a random label; and rows that are no targets, which never count.
TEST_P(LossesVocabulary, CountCorrect) {
  for (uint32_t classes : kVocabularies) {
    SCOPED_TRACE(::testing::Message() << classes << " classes");
    const uint32_t rows = 12;
    std::vector<float> logits;
    std::vector<uint32_t> labels;
    make(rows, classes, logits, labels);
    uint32_t want = 0;
    for (uint32_t r = 0; r < rows; ++r) {
      float* z = logits.data() + size_t(r) * classes;
      if (labels[r] & data::kNotTarget) continue;
      uint32_t best = uint32_t(std::max_element(z, z + classes) - z);
      if (r % 4 != 0) labels[r] = best;
      if (r % 4 == 1 && best + 1 < classes) z[classes - 1] = z[best];  // a tie later: the first still wins
      if (r % 4 == 2) z[best] = kNan;
      // The host's arg-max of what the GPU reads.
      bool nan = std::any_of(z, z + classes, [](float v) { return std::isnan(v); });
      best = uint32_t(std::max_element(z, z + classes) - z);
      want += !nan && best == labels[r];
    }
    ASSERT_GE(want, 2u);  // the labelled rows without a NaN
    Buffer z = upload(ctx(), fmt(), logits), correct(ctx(), 4);
    Buffer lab(ctx(), labels.size() * 4);
    lab.write(labels);
    Sequence seq(ctx());
    seq.begin();
    seq.fill(correct, 0);
    ops::count_correct(seq, fmt(), z, lab, correct, rows, classes);
    seq.end();
    seq.run();
    uint32_t got = 0;
    correct.read(&got, 4);
    EXPECT_EQ(got, want);
  }
}

INSTANTIATE_TEST_SUITE_P(Shaders, LossesVocabulary, ::testing::Values(Format::F32, Format::F16, Format::BF16),
                         [](const auto& info) { return std::string(format_name(info.param)); });

}  // namespace
}  // namespace vkamp::test
