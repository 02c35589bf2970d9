// The studio's BatchNorm panel data (ui/bn_statistics): per layer, the
// spread of running_mean and running_var and num_batches_tracked equal what
// a host read of the model's BufferStore holds, after a short run of a
// conv-BN model string; a model without BatchNorm has no rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "app/bn_statistics.hpp"
#include "support/gpu_test.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/graph/buffer_store.hpp"
#include "vkamp/graph/graph.hpp"
#include "vkamp/models/model_spec.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

using app::BnLayerStats;
using app::bn_layer_stats;

class BnStatistics : public GpuTest {};

const graph::ParamTensor& tensor(const std::vector<graph::ParamTensor>& ts, const std::string& name) {
  auto it = std::find_if(ts.begin(), ts.end(), [&](const graph::ParamTensor& t) { return t.name == name; });
  if (it == ts.end()) throw std::runtime_error("no buffer " + name);
  return *it;
}

// Checks one layer's row against the flat host read, element by element.
void expect_row_is_read(const app::BnLayerStats& s, const std::vector<graph::ParamTensor>& ts,
                        const std::vector<float>& flat) {
  for (const char* which : {"running_mean", "running_var"}) {
    const graph::ParamTensor& t = tensor(ts, s.layer + "." + which);
    const app::Spread& got = std::string(which) == "running_mean" ? s.running_mean : s.running_var;
    ASSERT_EQ(s.channels, t.size) << s.layer;
    float lo = INFINITY, hi = -INFINITY;
    double sum = 0;
    for (uint32_t c = 0; c < t.size; ++c) {
      const float v = flat[t.offset + c];
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
    }
    EXPECT_EQ(got.min, lo) << s.layer << "." << which;
    EXPECT_EQ(got.max, hi) << s.layer << "." << which;
    EXPECT_FLOAT_EQ(got.mean, float(sum / t.size)) << s.layer << "." << which;
  }
  EXPECT_EQ(double(s.batches), flat[tensor(ts, s.layer + ".num_batches_tracked").offset]) << s.layer;
}

TEST_F(BnStatistics, RowsOfAShortConvBatchNormRunAreTheBufferStoresHostRead) {
  config::TrainConfig c;
  c.precision = Format::F16;
  c.batch = 8;
  c.epochs = 1;
  c.seed = 3;
  c.optimizer.lr = 0.05;
  c.scaler.histogram_interval = 0;
  const data::HostData d = data::HostData::classification(data::make_classification(64, 36, 3, 8));
  train::Trainer t(ctx(), c, models::parse_model("6x6x1-c4k3p1-bnr-m2-f-3"), train::LossKind::SoftmaxXent, d);
  const train::TrainSummary summary = t.run();
  ASSERT_FALSE(summary.failed) << summary.failure;
  const std::vector<float> flat = t.model().read_buffers();
  const std::vector<graph::ParamTensor>& ts = t.model().buffer_tensors();
  const std::vector<app::BnLayerStats> rows = app::bn_layer_stats(ts, flat);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].layer, "bn1");
  EXPECT_EQ(rows[0].channels, 4u);
  EXPECT_EQ(rows[0].batches, uint64_t(summary.applied));  // one per applied step
  EXPECT_GT(rows[0].batches, 0u);
  // Trained away from their starts (0 and 1).
  EXPECT_NE(rows[0].running_mean.max, 0.0f);
  EXPECT_NE(rows[0].running_var.mean, 1.0f);
  expect_row_is_read(rows[0], ts, flat);
}

TEST_F(BnStatistics, TwoLayersInTheBuffersOrderWithWrittenValues) {
  graph::Graph g;
  g.input("x", graph::Shape::vector(5));
  g.batch_norm("first", "x");
  g.param("head.weight", {3, 5});
  g.param("head.bias", {3}, graph::Init::Zero);
  g.linear("head", "first", "head.weight", "head.bias");
  g.batch_norm("second", "head");
  g.set_output("second");
  graph::BufferStore store(ctx(), g);
  // Their starts: mean 0, var 1, no batches.
  std::vector<app::BnLayerStats> rows = app::bn_layer_stats(store.tensors(), store.read());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].layer, "first");
  EXPECT_EQ(rows[1].layer, "second");
  EXPECT_EQ(rows[1].channels, 3u);
  EXPECT_EQ(rows[0].running_mean.max, 0.0f);
  EXPECT_EQ(rows[0].running_var.min, 1.0f);
  EXPECT_EQ(rows[0].batches, 0u);
  // Distinct values per channel, written and read back through the device.
  std::vector<float> v(store.padded_elements(), 0.0f);
  for (const graph::ParamTensor& t : store.tensors())
    for (uint32_t i = 0; i < t.size; ++i) v[t.offset + i] = float(t.offset) + 0.5f * float(i) - 1.0f;
  store.write(v);
  const std::vector<float> flat = store.read();
  ASSERT_EQ(flat, v);
  rows = app::bn_layer_stats(store.tensors(), flat);
  ASSERT_EQ(rows.size(), 2u);
  for (const app::BnLayerStats& r : rows) expect_row_is_read(r, store.tensors(), flat);
  const graph::ParamTensor& var2 = tensor(store.tensors(), "second.running_var");
  EXPECT_EQ(rows[1].running_var.min, float(var2.offset) - 1.0f);
  EXPECT_EQ(rows[1].running_var.max, float(var2.offset) + 0.0f);
  EXPECT_FLOAT_EQ(rows[1].running_var.mean, float(var2.offset) - 0.5f);
}

TEST_F(BnStatistics, AModelWithoutBatchNormHasNoRows) {
  config::TrainConfig c;
  c.batch = 8;
  c.epochs = 1;
  c.scaler.histogram_interval = 0;
  const data::HostData d = data::HostData::classification(data::make_classification(16, 36, 3, 8));
  train::Trainer t(ctx(), c, models::parse_model("6x6x1-c4k3p1r-m2-f-3"), train::LossKind::SoftmaxXent, d);
  EXPECT_TRUE(t.model().buffer_tensors().empty());
  EXPECT_TRUE(app::bn_layer_stats(t.model().buffer_tensors(), t.model().read_buffers()).empty());
}

}  // namespace
}  // namespace vkamp::test
