// models::LlamaDecoder (generation with a KV cache) on the golden fixtures'
// Hugging Face folders: appending the first window's tokens one at a time
// gives, at each position, the logits the float64 PyTorch reference
// computed for the whole window (tests/golden/make_llama_fixtures.py), and
// the full graph forward's. A wrong rotary position, head grouping, cache
// row or weight would differ by the logits' own size.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/test_paths.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/error.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/models/hf_checkpoint.hpp"
#include "vkamp/models/llama_decoder.hpp"
#include "vkamp/train/hf_weights.hpp"
#include "vkamp/train/model.hpp"

namespace vkamp::test {
namespace {

using Case = std::tuple<std::string, Format>;

class LlamaDecoderTest : public GpuTestP<Case> {};

TEST_P(LlamaDecoderTest, EachAppendGivesTheReferenceLogitsAtThatPosition) {
  const auto& [name, fmt] = GetParam();
  const std::string dir = VKAMP_TEST_DIR(VKAMP_GOLDEN_DIR) + "/" + name;
  const models::LlamaConfig cfg = models::read_hf_config(dir);
  const io::TensorFile expected = io::read_safetensors(dir + "/expected.safetensors");
  const io::Tensor* ids_t = expected.find("input_ids");
  ASSERT_TRUE(ids_t && ids_t->shape.size() == 2);
  const uint32_t T = uint32_t(ids_t->shape[1]), V = cfg.vocab_size;
  const std::vector<float> logits = expected.floats("logits", dir);

  train::Model m(ctx(), models::llama_graph(cfg, T), fmt, 1, 1, false, false);
  train::load_hf_weights(dir, m);
  double scale = 0;
  for (size_t i = 0; i < size_t(T) * V; ++i) scale = std::max(scale, double(std::abs(logits[i])));
  ASSERT_GT(scale, 0.5) << "the logits must be large enough for a wrong row to show";
  // As test_gpt_decoder.cpp's: fp32 sums in another order, 1e-3 of the
  // logits' scale; 16 bits, a rounding boundary crossed carried through the
  // layers, 40 units of the format's rounding.
  const double tolerance = (fmt == Format::F32 ? 1e-3 : 40 * unit_roundoff(fmt)) * std::max(1.0, scale);

  // T + 3 positions, so the table and cache reach past the window.
  models::LlamaDecoder decoder(ctx(), cfg, fmt, models::LlamaDecoder::flat_weights(m.working(), fmt, m.tensors()), T + 3);
  for (uint32_t p = 0; p < T; ++p) {
    int64_t id;
    std::memcpy(&id, ids_t->data.data() + 8 * p, 8);
    const std::vector<float> z = decoder.append(uint32_t(id));
    ASSERT_EQ(z.size(), V);
    for (uint32_t v = 0; v < V; ++v)
      ASSERT_NEAR(z[v], logits[size_t(p) * V + v], tolerance) << "position " << p << ", token " << v;
  }
  for (uint32_t p = T; p < T + 3; ++p) decoder.append(0);
  EXPECT_THROW(decoder.append(0), Error) << "the cache is full";
  auto too_long = [&] { models::LlamaDecoder(ctx(), cfg, fmt, models::LlamaDecoder::flat_weights(m.working(), fmt, m.tensors()),
                         cfg.max_position_embeddings + 1); };
  EXPECT_THROW(too_long(), ConfigError) << "more positions than max_position_embeddings";
}

// prefill: the first T - 1 tokens through the model at once give the
// reference logits at position T - 2, and the rows it cached serve the next
// append, which gives those at T - 1; within the same bound as the appends
// (the rows' sums run in another order, as the full forward's do).
TEST_P(LlamaDecoderTest, APrefillGivesTheLogitsOfAppendingTheTokensOneByOne) {
  const auto& [name, fmt] = GetParam();
  const std::string dir = VKAMP_TEST_DIR(VKAMP_GOLDEN_DIR) + "/" + name;
  const models::LlamaConfig cfg = models::read_hf_config(dir);
  const io::TensorFile expected = io::read_safetensors(dir + "/expected.safetensors");
  const io::Tensor* ids_t = expected.find("input_ids");
  ASSERT_TRUE(ids_t && ids_t->shape.size() == 2);
  const uint32_t T = uint32_t(ids_t->shape[1]), V = cfg.vocab_size;
  ASSERT_GE(T, 3u);
  const std::vector<float> logits = expected.floats("logits", dir);
  train::Model m(ctx(), models::llama_graph(cfg, T), fmt, 1, 1, false, false);
  train::load_hf_weights(dir, m);
  double scale = 0;
  for (size_t i = 0; i < size_t(T) * V; ++i) scale = std::max(scale, double(std::abs(logits[i])));
  const double tolerance = (fmt == Format::F32 ? 1e-3 : 40 * unit_roundoff(fmt)) * std::max(1.0, scale);
  std::vector<uint32_t> ids(T);
  for (uint32_t p = 0; p < T; ++p) {
    int64_t id;
    std::memcpy(&id, ids_t->data.data() + 8 * p, 8);
    ids[p] = uint32_t(id);
  }
  models::LlamaDecoder decoder(ctx(), cfg, fmt, models::LlamaDecoder::flat_weights(m.working(), fmt, m.tensors()), T);
  const std::vector<float> z = decoder.prefill(std::vector<uint32_t>(ids.begin(), ids.end() - 1));
  ASSERT_EQ(decoder.length(), T - 1);
  ASSERT_EQ(z.size(), V);
  for (uint32_t v = 0; v < V; ++v) ASSERT_NEAR(z[v], logits[size_t(T - 2) * V + v], tolerance) << "token " << v;
  const std::vector<float> next = decoder.append(ids[T - 1]);
  for (uint32_t v = 0; v < V; ++v) ASSERT_NEAR(next[v], logits[size_t(T - 1) * V + v], tolerance) << "token " << v;
  EXPECT_THROW(decoder.prefill({0, 0}), Error) << "past the cache";
}

INSTANTIATE_TEST_SUITE_P(Fixture, LlamaDecoderTest,
                         ::testing::Combine(::testing::Values("llama_gqa", "llama3_tied", "qwen2_bias"),
                                            ::testing::Values(Format::F32, Format::F16, Format::BF16)),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return std::get<0>(i.param) + "_" + format_name(std::get<1>(i.param));
                         });

}  // namespace
}  // namespace vkamp::test
