// The per-tensor exponent histograms of amp_check.comp against a CPU count
// of the same gradients: read back after each step (histogram_interval 1),
// unscaled, binned with std::ilogb and compared bin for bin.
#include <algorithm>
#include <array>
#include <cmath>

#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "tiny_model.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

using train::kHistBins;

// gpu_state.hpp: 56 log2 bins, bin b holding [2^(b-40), 2^(b-39)), then
// zero, inf, NaN. What lies outside [2^-40, 2^16) is counted in the end
// bins (our reading: the layout names no other place for it).
int bin_of(float v) {
  if (std::isnan(v)) return train::kHistNan;
  if (std::isinf(v)) return train::kHistInf;
  if (v == 0) return train::kHistZero;
  const int e = std::ilogb(v);  // floor(log2 |v|), subnormals included
  return std::clamp(e - train::kHistMinExp, 0, train::kHistLogBins - 1);
}

class HistogramReference : public GpuTestP<Format> {};

TEST_P(HistogramReference, BinsMatchACpuCountPerTensor) {
  auto data = one_batch_classification(16, 6, 3, 41);
  for (uint32_t r = 0; r < data.count; ++r) data.x[r * data.features] = 0;  // fc1.weight[:, 0] gets exact zeros
  config::TrainConfig c;
  c.precision = GetParam();
  c.batch = 8;
  c.epochs = 3;
  c.seed = 4;
  c.optimizer.lr = 0.1;
  c.scaler.histogram_interval = 1;
  // A modest scale: in fp16 the smallest gradients flush to zero or land
  // in the subnormals, so the zero bin and the low bins get counts.
  c.scaler.initial_loss_scale = 8;
  c.scaler.steps_per_increase = 1000;
  c.inject_overflow = {{2, 2}};  // an inf in fc1.weight: the inf bin
  train::Trainer t(ctx(), c, models::parse_model("6-8r-3"), train::LossKind::SoftmaxXent, data);
  std::vector<train::TensorHistogram> hists;
  t.on_histogram = [&](const train::TensorHistogram& h) { hists.push_back(h); };
  const auto& tensors = t.model().tensors();
  t.start();
  uint32_t zeros = 0, infs = 0, occupied = 0;
  for (uint32_t s = 0; s < 5; ++s) {
    ASSERT_TRUE(t.advance());
    t.sync();
    ASSERT_EQ(hists.size(), (s + 1) * tensors.size()) << "one histogram per tensor per step";
    // After the step the buffer still holds its (scaled) gradients.
    const auto g = download(t.model().grads(), c.precision, t.model().param_elements());
    for (size_t k = 0; k < tensors.size(); ++k) {
      const auto& h = hists[s * tensors.size() + k];
      ASSERT_EQ(h.step, s);
      ASSERT_EQ(h.tensor, tensors[k].name);
      std::array<uint32_t, kHistBins> want{};
      // Unscaled as the shader does: S is a power of two, so |g| / S is exact.
      for (uint32_t i = tensors[k].offset; i < tensors[k].offset + tensors[k].size; ++i)
        ++want[bin_of(std::abs(g[i]) / h.loss_scale)];
      for (int b = 0; b < kHistBins; ++b) EXPECT_EQ(h.bins[b], want[b]) << h.tensor << " bin " << b << " step " << s;
      zeros += want[train::kHistZero];
      infs += want[train::kHistInf];
      for (int b = 0; b < train::kHistLogBins; ++b) occupied += want[b] ? 1 : 0;
    }
  }
  t.finish();
  EXPECT_EQ(infs, 1u) << "the injected inf";
  EXPECT_GE(zeros, 4u * 8u) << "the zero feature's 8 weights per step, less the injected inf";
  EXPECT_GT(occupied, 20u) << "the counts spread over many bins";
}

INSTANTIATE_TEST_SUITE_P(Formats, HistogramReference, ::testing::Values(Format::F32, Format::F16),
                         [](const ::testing::TestParamInfo<Format>& i) { return std::string(format_name(i.param)); });

}  // namespace
}  // namespace vkamp::test
