// The language-model loss over chunks of rows (train/logit_chunks.hpp)
// against whole logits (VKAMP_LOGIT_CHUNK=off): a Llama LoRA fine-tune,
// its head the tied embedding table, trains to the same losses, skip
// decisions and master weights, bit for bit, in fp16 and fp32, with the
// rows cut into several chunks (the last one short); its held-out loss and
// accuracy are the same; it holds one chunk's logits, not every row's.
#include <bit>
#include <random>

#include "support/gpu_test.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/error.hpp"
#include "vkamp/knobs.hpp"
#include "vkamp/models/llama.hpp"
#include "vkamp/train/evaluator.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

constexpr uint32_t kVocab = 1500, kSeq = 32, kBatch = 3;  // 96 token rows

models::LlamaConfig small_llama(bool tied) {
  models::LlamaConfig c;
  c.vocab_size = kVocab;
  c.hidden_size = 64;
  c.intermediate_size = 128;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.max_position_embeddings = kSeq;
  c.tie_word_embeddings = tied;
  return c;
}

struct ChunkRun {
  std::vector<float> losses, master;
  std::vector<bool> skipped;
  train::Evaluator::Scores held_out;
  graph::MemoryReport memory;
  uint32_t chunk_rows = 0;  // 0: whole logits
};

std::vector<uint32_t> tokens(uint64_t seed, uint32_t n) {
  std::mt19937_64 gen(seed);
  std::vector<uint32_t> t(n);
  for (uint32_t& v : t) v = uint32_t(gen() % kVocab);
  return t;
}

// `chunk`: VKAMP_LOGIT_CHUNK. A first scale of 2^24 overflows fp16's
// gradients, so the first steps are skipped and the scale backs off.
ChunkRun train(Context& ctx, Format fmt, bool tied, const char* chunk) {
  ScopedEnv env("VKAMP_LOGIT_CHUNK", chunk);
  models::LoraConfig lora;
  lora.rank = 4;
  config::TrainConfig cfg;
  cfg.batch = kBatch;
  cfg.max_steps = 4;
  cfg.seed = 5;
  cfg.precision = fmt;
  cfg.optimizer.kind = config::OptimizerKind::AdamW;
  cfg.optimizer.lr = 1e-2;
  cfg.scaler.histogram_interval = 0;
  cfg.scaler.initial_loss_scale = fmt == Format::F16 ? 16777216.0 : 65536.0;
  train::Trainer t(ctx, cfg, models::llama_graph(small_llama(tied), kSeq, lora), train::LossKind::SoftmaxXent,
                   data::HostData::windows(tokens(11, kSeq * 12 + 1), kSeq, kSeq));
  ChunkRun r;
  t.on_step = [&](const train::StepMetrics& m) {
    r.losses.push_back(m.loss);
    r.skipped.push_back(m.skipped);
  };
  t.run();
  r.master = t.model().read_master();
  r.memory = t.model().memory();
  if (const train::LogitChunks* c = t.model().logit_chunks()) r.chunk_rows = c->chunk_rows();
  // Held out: 5 windows, so the evaluator's last batch is short too.
  const data::HostData held = data::HostData::windows(tokens(12, kSeq * 5 + 1), kSeq, kSeq);
  r.held_out = {t.evaluate(held), t.mean_loss(held)};
  return r;
}

void expect_same_bits(const ChunkRun& whole, const ChunkRun& chunked) {
  ASSERT_EQ(whole.losses.size(), chunked.losses.size());
  for (size_t i = 0; i < whole.losses.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(chunked.losses[i]), std::bit_cast<uint32_t>(whole.losses[i])) << "step " << i;
    EXPECT_EQ(chunked.skipped[i], whole.skipped[i]) << "step " << i;
  }
  ASSERT_EQ(whole.master.size(), chunked.master.size());
  for (size_t i = 0; i < whole.master.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(chunked.master[i]), std::bit_cast<uint32_t>(whole.master[i])) << "master " << i;
  EXPECT_EQ(chunked.held_out.accuracy, whole.held_out.accuracy);
  EXPECT_EQ(chunked.held_out.loss, whole.held_out.loss);
}

class LogitChunks : public GpuTest, public ::testing::WithParamInterface<Format> {};

TEST_P(LogitChunks, TrainAndEvaluateToTheWholeLogitsBits) {
  const Format fmt = GetParam();
  for (bool tied : {true, false}) {
    SCOPED_TRACE(tied ? "tied" : "untied lm_head");
    const ChunkRun whole = train(ctx(), fmt, tied, "off");
    const ChunkRun chunked = train(ctx(), fmt, tied, "20");  // 96 rows: chunks of 20, the last of 16
    ASSERT_EQ(whole.chunk_rows, 0u);
    ASSERT_EQ(chunked.chunk_rows, 20u);
    expect_same_bits(whole, chunked);
    if (fmt == Format::F16) {
      EXPECT_TRUE(whole.skipped.front()) << "2^24 overflows fp16: the skip path is taken";
      EXPECT_FALSE(whole.skipped.back());
    }
    EXPECT_NE(whole.master, std::vector<float>(whole.master.size(), 0.0f));
    // Every row's logits and their gradient, against one chunk's.
    const uint64_t eb = format_bytes(fmt);
    EXPECT_EQ(whole.memory.logits, 2 * uint64_t(kBatch) * kSeq * kVocab * eb);
    EXPECT_EQ(chunked.memory.logits, 2 * uint64_t(20) * kVocab * eb);
    EXPECT_LT(chunked.memory.activations + (whole.memory.logits - chunked.memory.logits) / 2,
              whole.memory.activations);
  }
}

// Under a 128 KiB binding the table (1,500 x 64, 188 KiB in fp16) passes
// one binding, so both paths' head products run in blocks of it
// (gemm_binding_chunks.cpp): dh sums the vocabulary in the same blocks
// through C, and the whole path's row blocks are its own.
TEST_P(LogitChunks, UnderABindingCapPastTheTable) {
  const Format fmt = GetParam();
  ScopedEnv binding("VKAMP_TEST_MAX_BINDING", "128K");
  ContextOptions opt;
  opt.validation = ctx().validation();
  Context capped(opt);
  ASSERT_EQ(capped.info().max_storage_range, 128u << 10);
  const ChunkRun whole = train(capped, fmt, true, "off");
  const ChunkRun chunked = train(capped, fmt, true, "20");
  expect_same_bits(whole, chunked);
}

INSTANTIATE_TEST_SUITE_P(Formats, LogitChunks, ::testing::Values(Format::F16, Format::F32),
                         [](const auto& i) { return std::string(format_name(i.param)); });

class LogitChunksModel : public GpuTest {};

TEST_F(LogitChunksModel, ChunkRowsFollowTheBudgetAndAForcedCount) {
  const graph::Graph g = models::llama_graph(small_llama(true), kSeq, models::LoraConfig{.rank = 4});
  const auto head = train::LogitChunks::find(g, graph::AmpLevel::O2);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->vocab, kVocab);
  EXPECT_EQ(head->hidden, 64u);
  EXPECT_FALSE(train::LogitChunks::find(g, graph::AmpLevel::O1)) << "O1 runs the head beside casts";
  // A full fine-tune trains the head's weight: whole logits.
  EXPECT_FALSE(train::LogitChunks::find(models::llama_graph(small_llama(true), kSeq, models::LoraConfig{.rank = 0}),
                                        graph::AmpLevel::O2));
  // All 96 rows' logits (288 KB) fit 32 MiB: one chunk. Forced: as asked.
  EXPECT_EQ(train::LogitChunks::chunk_rows(ctx(), *head, Format::F16, 96, 0), 96u);
  EXPECT_EQ(train::LogitChunks::chunk_rows(ctx(), *head, Format::F16, 96, 7), 7u);
  // A real vocabulary: Qwen2.5's 151,936 in fp16, 1,024 tokens: 110 rows
  // fit 32 MiB, spread evenly over 10 chunks (103 rows).
  train::LogitHead qwen{0, 896, 151936, 256};
  EXPECT_EQ(train::LogitChunks::chunk_rows(ctx(), qwen, Format::F16, 1024, 0), 103u);
}

TEST_F(LogitChunksModel, TheLogitsOfAChunkedModelAreNotReadAsWhole) {
  ScopedEnv env("VKAMP_LOGIT_CHUNK", "16");
  const graph::Graph g = models::llama_graph(small_llama(true), kSeq, models::LoraConfig{.rank = 4});
  train::Model m(ctx(), g, Format::F16, 2, 1, true, true, graph::AmpLevel::O2, false, train::LogitChunking::from_env());
  ASSERT_TRUE(m.logit_chunks());
  EXPECT_EQ(m.logit_chunks()->chunk_rows(), 16u);
  EXPECT_THROW(m.output(), Error);
  EXPECT_EQ(m.hidden().bytes(), size_t(2) * kSeq * 64 * 2);
  // Without the setting (every model but a trainer's language model): whole.
  train::Model whole(ctx(), g, Format::F16, 2, 1, true, true);
  EXPECT_FALSE(whole.logit_chunks());
  EXPECT_EQ(whole.output().bytes(), size_t(2) * kSeq * kVocab * 2);
  ScopedEnv bad("VKAMP_LOGIT_CHUNK", "12x");
  EXPECT_THROW(train::LogitChunking::from_env(), ConfigError);
}

}  // namespace
}  // namespace vkamp::test
