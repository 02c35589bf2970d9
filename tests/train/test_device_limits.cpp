// The device's limits kept: ranges placed in blocks that never cross a
// block's end (BlockLayout, the activation planner), and a Llama fine-tune
// under the tests' caps (VKAMP_TEST_MAX_BINDING, VKAMP_TEST_MAX_ALLOCATION:
// its embedding, lm_head, logits, frozen base and activation pool each
// past one binding or one block) training to the same bits as without
// them. And a plan that passes the budget stops before anything is
// allocated.
#include <bit>
#include <random>

#include "support/gpu_test.hpp"
#include "vkamp/error.hpp"
#include "vkamp/knobs.hpp"
#include "vkamp/models/llama.hpp"
#include "vkamp/train/memory_budget.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

TEST(BlockLayout, RangesNeverCrossABlockEnd) {
  const BlockLayout l{1024, 256};
  uint64_t end = 0;
  EXPECT_EQ(l.append(end, 600, "a"), 0u);
  EXPECT_EQ(l.append(end, 300, "b"), 1024u) << "600 + 300 would cross 1024";
  EXPECT_EQ(l.append(end, 100, "c"), 1536u) << "aligned to 256 after 1324";
  EXPECT_EQ(l.append(end, 1024, "d"), 2048u) << "a whole block starts one";
  EXPECT_EQ(l.fit(3000, 0, "empty"), 3072u);
  EXPECT_THROW(l.append(end, 1025, "too large"), Error);
}

TEST(BlockLayout, PlannedBuffersStayInOneBlockAndNeverOverlapAlive) {
  std::mt19937_64 gen(7);
  std::vector<graph::Lifetime> b(300);
  for (graph::Lifetime& l : b) {
    l.bytes = 1 + gen() % 5000;
    l.first = uint32_t(gen() % 100);
    l.last = l.first + uint32_t(gen() % 30);
  }
  const BlockLayout blocks{8192, 256};
  const graph::MemoryPlan p = graph::plan_memory(b, blocks);
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(p.offsets[i] % 256, 0u);
    EXPECT_EQ(p.offsets[i] / 8192, (p.offsets[i] + b[i].bytes - 1) / 8192) << "buffer " << i << " crosses a block";
    for (size_t j = 0; j < i; ++j) {
      const bool alive = b[i].first <= b[j].last && b[j].first <= b[i].last;
      const bool apart = p.offsets[i] + b[i].bytes <= p.offsets[j] || p.offsets[j] + b[j].bytes <= p.offsets[i];
      EXPECT_TRUE(!alive || apart) << "buffers " << i << " and " << j;
    }
  }
  EXPECT_THROW(graph::plan_memory({{9000, 0, 1}}, blocks), Error);
}

// A Llama shape whose logits (2 x 64 x 2,000 fp16: 500 KiB) pass a 384 KiB
// binding, and whose frozen base (about 860 KiB) and activations pass a
// 512 KiB block; the LoRA masters (about 170 KiB) fit one binding, as the
// optimizer needs. Its tables (250 KiB) fit one binding: a table past one
// binding makes the lm_head's input gradient sum its vocabulary in blocks
// through the fp16 gradient (gemm_binding_chunks.cpp), which rounds once
// more per block and so changes the last bits; test_embedding and
// test_gemm_binding_chunks test that path against double.
models::LlamaConfig capped_shape() {
  models::LlamaConfig c;
  c.vocab_size = 2000;
  c.hidden_size = 64;
  c.intermediate_size = 176;
  c.num_hidden_layers = 4;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.max_position_embeddings = 64;
  return c;
}

struct CappedRun {
  std::vector<float> losses, master;
  graph::MemoryReport memory;
};

CappedRun train_llama(Context& c) {
  models::LoraConfig lora;
  lora.rank = 8;
  lora.dropout = 0.1;
  const uint32_t seq = 64;
  std::mt19937_64 gen(11);
  std::vector<uint32_t> tokens(seq * 8 + 1);
  for (uint32_t& t : tokens) t = uint32_t(gen() % 2000);
  config::TrainConfig cfg;
  cfg.batch = 2;
  cfg.max_steps = 3;
  cfg.seed = 3;
  cfg.precision = Format::F16;
  cfg.optimizer.kind = config::OptimizerKind::AdamW;
  cfg.optimizer.lr = 1e-2;
  cfg.scaler.histogram_interval = 0;
  train::Trainer t(c, cfg, models::llama_graph(capped_shape(), seq, lora), train::LossKind::SoftmaxXent,
                   data::HostData::windows(tokens, seq, seq));
  CappedRun r;
  t.on_step = [&](const train::StepMetrics& m) { r.losses.push_back(m.loss); };
  t.run();
  r.master = t.model().read_master();
  r.memory = t.model().memory();
  return r;
}

class DeviceLimits : public GpuTest {};

// Whole logits (past one binding under the caps) and the loss's chunks of
// rows (train/logit_chunks.hpp; one chunk without the caps, two under them).
class DeviceLimitsLogits : public GpuTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(DeviceLimitsLogits, LoweredLimitsTrainToTheSameBits) {
  ScopedEnv chunk("VKAMP_LOGIT_CHUNK", GetParam());
  const CappedRun plain = train_llama(ctx());
  ScopedEnv binding("VKAMP_TEST_MAX_BINDING", "384K"), allocation("VKAMP_TEST_MAX_ALLOCATION", "512K");
  ContextOptions opt;
  opt.validation = ctx().validation();
  Context capped(opt);
  ASSERT_EQ(capped.info().max_storage_range, 384u << 10);
  ASSERT_EQ(capped.info().max_block(), 512u << 10);
  const CappedRun under = train_llama(capped);
  // Every chunked path taken: more than one block of frozen base and of activations.
  EXPECT_GT(under.memory.frozen, uint64_t(512) << 10);
  EXPECT_GT(under.memory.activations - under.memory.logits, uint64_t(512) << 10)
      << "the activation pool (less the logits and their gradient) fits one block";
  ASSERT_EQ(plain.losses.size(), 3u);
  ASSERT_EQ(under.losses, plain.losses);
  ASSERT_EQ(under.master.size(), plain.master.size());
  for (size_t i = 0; i < plain.master.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(under.master[i]), std::bit_cast<uint32_t>(plain.master[i])) << "master " << i;
  EXPECT_NE(under.master, std::vector<float>(under.master.size(), 0.0f));
}

INSTANTIATE_TEST_SUITE_P(Logits, DeviceLimitsLogits, ::testing::Values("off", "auto"),
                         [](const auto& i) { return std::string(i.param); });

TEST_F(DeviceLimits, APlanPastTheBudgetStopsBeforeAllocating) {
  ScopedEnv budget("VKAMP_TEST_MEMORY_BUDGET", "1M");
  ContextOptions opt;
  opt.validation = ctx().validation();
  Context small(opt);
  const uint64_t peak = small.peak_device_bytes();
  config::TrainConfig cfg;
  cfg.batch = 2;
  std::vector<uint32_t> tokens(64 * 4 + 1, 1);
  try {
    train::Trainer t(small, cfg, models::llama_graph(capped_shape(), 64), train::LossKind::SoftmaxXent,
                     data::HostData::windows(tokens, 64, 64));
    FAIL() << "a 1 MiB budget took a model of several MiB";
  } catch (const train::MemoryPlanError& e) {
    EXPECT_NE(std::string(e.what()).find("Nothing was allocated"), std::string::npos) << e.what();
    EXPECT_GT(e.plan.total(), uint64_t(1) << 20);
    EXPECT_EQ(small.peak_device_bytes(), peak) << "something was allocated before the check";
  }
}

}  // namespace
}  // namespace vkamp::test
