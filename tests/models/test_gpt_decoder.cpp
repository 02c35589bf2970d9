// models::GptDecoder (generation with a KV cache) against the full forward
// of the same GPT: at every position of a random text, the logits of one
// appended token equal the full window's logits at that position, within
// the rounding of different summation orders. A wrong position, head,
// cache row or weight would differ by the logits' own size.
#include <algorithm>
#include <cmath>
#include <random>

#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "vkamp/error.hpp"
#include "vkamp/models/gpt.hpp"
#include "vkamp/models/gpt_decoder.hpp"
#include "vkamp/train/evaluator.hpp"
#include "vkamp/train/model.hpp"

namespace vkamp::test {
namespace {

const models::GptConfig kGpt{.vocab_size = 13, .block_size = 9, .n_layer = 2, .n_head = 2, .n_embd = 16};

class GptDecoderTest : public GpuTestP<Format> {
 protected:
  Format fmt() const { return GetParam(); }
  // A model whose weights are larger than nanoGPT's init (std 0.02 gives
  // logits near 0, where any indexing mistake would be small too).
  std::unique_ptr<train::Model> model() {
    auto m = std::make_unique<train::Model>(ctx(), models::gpt_graph(kGpt), fmt(), 1, 7, false, false);
    std::normal_distribution<float> w(0.0f, 0.3f);
    std::vector<float> weights = m->read_master();
    for (float& v : weights) v = w(rng());
    m->write_master(weights);
    return m;
  }
  std::vector<uint32_t> text() {
    std::vector<uint32_t> ids(kGpt.block_size);
    for (uint32_t& t : ids) t = std::uniform_int_distribution<uint32_t>(0, kGpt.vocab_size - 1)(rng());
    return ids;
  }
  // How far the two paths may differ. Both compute the same products and
  // round each stored result to the format once; they differ only in how
  // a GEMM of one row splits its fp32 sums (split-k) against the window's.
  // fp32: a different sum order moves a result by at most about n u of
  // its terms' magnitude (n <= 4 n_embd = 64 terms, u = 2^-24), which the
  // LayerNorms rescale by at most the inverse of a row's deviation: below
  // 1e-4 of the logits' scale here, bounded by 1e-3. 16 bits: a sum that
  // lands on the other side of a rounding boundary stores a value one ulp
  // (2^-11 relative in fp16) away, and the layers after carry it, with
  // the same rescaling: a few ulps of the logits' scale, bounded by 40
  // units of the format's rounding (2% in fp16, 16% in bf16).
  double tolerance(double scale) const {
    return (fmt() == Format::F32 ? 1e-3 : 40 * unit_roundoff(fmt())) * std::max(1.0, scale);
  }
};

TEST_P(GptDecoderTest, EachAppendGivesTheFullForwardsLogitsAtThatPosition) {
  // About one draw in 500 puts the final LayerNorm's gains near 0 and every
  // logit below 0.5, where a wrong row would hide: such a model is drawn again.
  std::unique_ptr<train::Model> m;
  const std::vector<uint32_t> ids = text();
  std::vector<float> window;
  const uint32_t V = kGpt.vocab_size;
  double scale = 0;
  for (int draw = 0; draw < 8 && scale <= 0.5; ++draw) {
    m = model();
    train::Evaluator full(ctx(), *m, train::LossKind::SoftmaxXent, 1);
    window = full.predict(std::vector<float>(ids.begin(), ids.end()), 1);
    scale = 0;
    for (float z : window) scale = std::max(scale, double(std::abs(z)));
  }
  ASSERT_GT(scale, 0.5) << "the logits must be large enough for a wrong row to show";

  models::GptDecoder decoder(ctx(), kGpt, fmt(), m->working(), m->tensors());
  for (uint32_t p = 0; p < kGpt.block_size; ++p) {
    const std::vector<float> z = decoder.append(ids[p]);
    ASSERT_EQ(z.size(), V);
    EXPECT_EQ(decoder.length(), p + 1);
    for (uint32_t v = 0; v < V; ++v)
      ASSERT_NEAR(z[v], window[size_t(p) * V + v], tolerance(scale)) << "position " << p << ", token " << v;
  }
  EXPECT_THROW(decoder.append(ids[0]), Error) << "the cache holds block_size positions";

  // After reset() the same text gives the same bits (fixed-order sums).
  const std::vector<float> first = [&] {
    decoder.reset();
    return decoder.append(ids[0]);
  }();
  decoder.reset();
  EXPECT_EQ(decoder.append(ids[0]), first);
  EXPECT_THROW(decoder.append(V), Error) << "a token outside the vocabulary";
}

INSTANTIATE_TEST_SUITE_P(Train, GptDecoderTest, ::testing::Values(Format::F32, Format::F16, Format::BF16),
                         [](const ::testing::TestParamInfo<Format>& i) { return std::string(format_name(i.param)); });

}  // namespace
}  // namespace vkamp::test
