// --recompute (executor_recompute.cpp): each block's forward runs again in
// the backward. The same kernels on the same inputs give the same bits:
// the gradients of one step, and the losses and weights of a short run
// (dropout's masks drawn again, micro-batches, a dynamic loss scale), are
// bit for bit those without it, for a Llama (LoRA with dropout, and every
// weight trained), a GPT with dropout in its blocks and a ResNet whose
// BatchNorms stage statistics for the update pass (they run once). The plan
// keeps less, and no two buffers alive together share bytes.
#include <random>

#include "graph_models.hpp"
#include "vkamp/models/gpt.hpp"
#include "vkamp/models/llama.hpp"
#include "vkamp/models/resnet.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

constexpr uint32_t kVocab = 19, kSeq = 8;

models::LlamaConfig tiny_llama() {
  models::LlamaConfig c;
  c.vocab_size = kVocab;
  c.hidden_size = 16;
  c.intermediate_size = 24;
  c.num_hidden_layers = 3;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.max_position_embeddings = kSeq;
  return c;
}

// rank 0: every weight trained.
graph::Graph llama(uint32_t rank) {
  models::LoraConfig lora;
  lora.rank = rank;
  lora.alpha = 8;
  lora.dropout = rank ? 0.25 : 0;
  return models::llama_graph(tiny_llama(), kSeq, lora);
}

graph::Graph gpt() { return models::gpt_graph({.vocab_size = kVocab, .block_size = kSeq, .n_layer = 2, .n_head = 2,
                                               .n_embd = 16, .dropout = 0.25}); }

graph::Graph resnet() {
  return models::resnet_graph({.height = 8, .width = 8, .channels = 1, .classes = 3, .widths = {4, 8}, .blocks = 1});
}

std::vector<uint32_t> tokens(size_t n) {
  std::mt19937_64 gen(3);
  std::vector<uint32_t> s(n);
  for (size_t i = 0; i < n; ++i) s[i] = i && gen() % 3 ? (s[i - 1] + 1) % kVocab : uint32_t(gen() % kVocab);
  return s;
}

// Nonzero words of a buffer's `n` values: a gradient that vanished checks nothing.
size_t nonzero(const std::vector<float>& v) {
  size_t n = 0;
  for (float x : v) n += x != 0;
  return n;
}

class Recompute : public GpuTestP<Format> {
 protected:
  Format fmt() const { return GetParam(); }
};

// One forward and backward of a model over random token ids and a random
// output gradient: the parameter gradients, as stored.
std::vector<float> one_step_gradients(graph::Graph g, Format fmt, bool recompute, uint32_t rows) {
  train::Model m(ctx(), std::move(g), fmt, rows, /*seed=*/7, false, false, graph::AmpLevel::O2, recompute);
  EXPECT_EQ(m.executor().recomputes(), recompute);
  EXPECT_TRUE(m.executor().can_recompute());
  std::mt19937_64 gen(11);
  // Every weight moved off its start (LoRA's B starts at 0, which would
  // leave A's gradient 0 and unchecked).
  std::normal_distribution<float> moved(0, 0.1f);
  std::vector<float> w = m.read_master();
  for (const auto& t : m.tensors())
    for (uint32_t i = t.offset; i < t.offset + t.size; ++i) w[i] += moved(gen);
  m.write_master(w);
  std::vector<uint32_t> ids(size_t(rows) * kSeq);
  for (uint32_t& id : ids) id = uint32_t(gen() % kVocab);
  Buffer x(ctx(), ids.size() * 4);
  x.write(ids);
  std::normal_distribution<float> nd(0, 0.05f);
  std::vector<float> dy(size_t(rows) * m.outputs());
  for (float& v : dy) v = nd(gen);
  Buffer dout = upload(ctx(), fmt, dy);
  Sequence s(ctx());
  s.begin();
  m.record_forward(s, x, rows);
  s.copy(dout, m.doutput(), dout.bytes());
  m.record_backward(s, x, rows, false);
  s.end();
  s.run();
  const std::vector<float> all = download(m.grads(), fmt, m.param_elements());
  std::vector<float> g;  // the tensors' elements, not the padding between them
  for (const auto& t : m.tensors()) g.insert(g.end(), all.begin() + t.offset, all.begin() + t.offset + t.size);
  return g;
}

TEST_P(Recompute, LlamaGradientsAreTheSameBits) {
  for (uint32_t rank : {4u, 0u}) {
    SCOPED_TRACE(rank ? "LoRA with dropout" : "every weight");
    const std::vector<float> plain = one_step_gradients(llama(rank), fmt(), false, 3);
    const std::vector<float> again = one_step_gradients(llama(rank), fmt(), true, 3);
    EXPECT_GT(nonzero(plain), plain.size() * 9 / 10);
    EXPECT_EQ(plain, again);
  }
}

struct Run {
  std::vector<float> losses, weights, buffers;
  graph::MemoryReport memory;
};

template <class Model>
Run train(Model model, Format fmt, bool recompute, const data::HostData& data, uint32_t grad_accum,
          graph::AmpLevel level) {
  config::TrainConfig c;
  c.precision = fmt;
  c.amp_level = level;
  c.batch = 4;
  c.grad_accum = grad_accum;
  c.max_steps = 4;
  c.seed = 9;
  c.optimizer.kind = config::OptimizerKind::AdamW;
  c.optimizer.lr = 0.01;
  c.scaler.histogram_interval = 0;
  c.recompute = recompute;
  train::Trainer t(ctx(), c, std::move(model), train::LossKind::SoftmaxXent, data);
  Run r;
  t.on_step = [&](const train::StepMetrics& m) { r.losses.push_back(m.loss); };
  const auto summary = t.run();
  EXPECT_FALSE(summary.failed) << summary.failure;
  r.weights = t.model().read_master();
  r.buffers = t.model().read_buffers();
  r.memory = t.model().memory();
  expect_no_live_overlap(t.model().executor().placements());
  return r;
}

// Trained with and without: the same losses and weights, and the plan with
// it keeps less than the one without (each run's memory line has both).
template <class MakeGraph>
void expect_same_run(MakeGraph make, Format fmt, const data::HostData& data, uint32_t grad_accum = 1,
                     graph::AmpLevel level = graph::AmpLevel::O2) {
  const Run plain = train(make(), fmt, false, data, grad_accum, level);
  const Run again = train(make(), fmt, true, data, grad_accum, level);
  ASSERT_FALSE(plain.losses.empty());
  EXPECT_EQ(plain.losses, again.losses);
  EXPECT_EQ(plain.weights, again.weights);
  EXPECT_EQ(plain.buffers, again.buffers);
  EXPECT_LT(again.memory.activations, plain.memory.activations);
  EXPECT_EQ(again.memory.activations_other_recompute, plain.memory.activations);
  EXPECT_EQ(plain.memory.activations_other_recompute, again.memory.activations);
  EXPECT_EQ(plain.memory.total_other_recompute(), again.memory.total());
  EXPECT_EQ(again.memory.total_other_recompute(), plain.memory.total());
}

TEST_P(Recompute, LlamaLoraTrainsToTheSameBits) {
  expect_same_run([] { return llama(4); }, fmt(), data::HostData::windows(tokens(200), kSeq, 1), 2);
}

TEST_P(Recompute, LlamaFullFineTuneTrainsToTheSameBits) {
  expect_same_run([] { return llama(0); }, fmt(), data::HostData::windows(tokens(200), kSeq, 1));
}

// O1: activations in fp32, with cast steps where formats meet (named after
// the tensor they cast, so inside its block).
TEST_P(Recompute, LlamaAtO1TrainsToTheSameBits) {
  if (fmt() == Format::F32) GTEST_SKIP() << "O1 is a 16-bit level";
  expect_same_run([] { return llama(0); }, fmt(), data::HostData::windows(tokens(200), kSeq, 1), 1, graph::AmpLevel::O1);
}

TEST_P(Recompute, GptWithDropoutTrainsToTheSameBits) {
  expect_same_run(gpt, fmt(), data::HostData::windows(tokens(200), kSeq, 1));
}

// BatchNorm stages its batch statistics in the forward for the commit: it
// does not run again (its output is kept), the convolutions and ReLUs
// around it do.
TEST_P(Recompute, ResNetWithBatchNormTrainsToTheSameBits) {
  expect_same_run(resnet, fmt(), data::HostData::classification(data::make_classification(64, 64, 3, 5)));
}

INSTANTIATE_TEST_SUITE_P(Format, Recompute, ::testing::Values(Format::F32, Format::F16),
                         [](const auto& info) { return std::string(format_name(info.param)); });

// A graph without blocks (no `<path>.<number>.` names) has nothing to run
// again: the plan is the plain one, and the memory line names no other.
class RecomputePlan : public GpuTest {};

// At the loss, between the forward and the backward, the activation pool
// holds what the blocks hand on and nothing made inside one: each layer's
// input, the last layer's output and the final norm's (read by the
// backwards of the norm and lm_head), all of the residual stream's size.
// Without recomputation it holds every block's insides too.
TEST_F(RecomputePlan, AtTheLossOnlyTheResidualStreamIsKept) {
  const uint32_t rows = 2, layers = tiny_llama().num_hidden_layers;
  for (bool recompute : {true, false}) {
    SCOPED_TRACE(recompute ? "recomputed" : "kept");
    train::Model m(ctx(), llama(4), Format::F16, rows, 1, false, false, graph::AmpLevel::O2, recompute);
    const uint32_t loss_time = uint32_t(m.executor().steps().size());
    const uint64_t stream = uint64_t(rows) * kSeq * tiny_llama().hidden_size * 2;
    uint32_t alive = 0, other = 0;
    for (const auto& p : m.executor().placements())
      if (!p.workspace && p.first <= loss_time && loss_time <= p.last) ++(p.bytes == stream ? alive : other);
    if (recompute) {
      EXPECT_EQ(alive, layers + 2);
      EXPECT_EQ(other, 0u);
    } else {
      EXPECT_GT(alive + other, 4 * layers);
    }
    expect_no_live_overlap(m.executor().placements());
  }
}

class RecomputeWithoutBlocks : public GpuTest {};

TEST_F(RecomputeWithoutBlocks, ResidualMlpHasNothingToRunAgain) {
  train::Model m(ctx(), residual_mlp(8, 16, 3), Format::F16, 4, 1, false, false, graph::AmpLevel::O2, true);
  EXPECT_FALSE(m.executor().can_recompute());
  EXPECT_EQ(m.executor().activation_bytes(true), m.executor().activation_bytes(false));
  EXPECT_EQ(m.memory().activations_other_recompute, 0u);
}

}  // namespace
}  // namespace vkamp::test
