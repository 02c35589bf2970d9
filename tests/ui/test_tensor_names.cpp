// The per-tensor table's short names (dashboard/tensor_names.hpp): every
// adapter of a Llama fine-tune gets a name of its own that shows its layer
// and projection; names of other models stay whole.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tensor_names.hpp"

namespace vkamp::test {
namespace {

using ui::short_tensor_name;

TEST(ShortTensorName, AdaptersShowLayerProjectionAndFactor) {
  EXPECT_EQ(short_tensor_name("model.layers.0.self_attn.q_proj.lora_A.weight"), "0.q_proj.A");
  EXPECT_EQ(short_tensor_name("model.layers.23.mlp.down_proj.lora_B.weight"), "23.down_proj.B");
  // PEFT's names in an adapter file.
  EXPECT_EQ(short_tensor_name("base_model.model.model.layers.7.self_attn.o_proj.lora_A.weight"), "7.o_proj.A");
}

TEST(ShortTensorName, EveryAdapterOfA24LayerModelIsTold) {
  const char* projections[] = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                               "mlp.gate_proj",    "mlp.up_proj",      "mlp.down_proj"};
  std::set<std::string> shorts;
  size_t rows = 0;
  for (int layer = 0; layer < 24; ++layer)
    for (const char* p : projections)
      for (const char* f : {"lora_A", "lora_B"}) {
        const std::string s =
            short_tensor_name("model.layers." + std::to_string(layer) + "." + p + "." + f + ".weight");
        EXPECT_LE(s.size(), 14u) << s;
        shorts.insert(s);
        ++rows;
      }
  EXPECT_EQ(rows, 336u);
  EXPECT_EQ(shorts.size(), rows);  // no two rows look alike
}

TEST(ShortTensorName, TheRestOfADecoderLosesOnlyItsPrefix) {
  EXPECT_EQ(short_tensor_name("model.layers.3.input_layernorm.weight"), "3.input_layernorm.weight");
  EXPECT_EQ(short_tensor_name("model.layers.3.mlp.up_proj.weight"), "3.up_proj.weight");  // --lora-rank 0
  EXPECT_EQ(short_tensor_name("model.embed_tokens.weight"), "embed_tokens.weight");
  EXPECT_EQ(short_tensor_name("model.norm.weight"), "norm.weight");
}

TEST(ShortTensorName, OtherNamesStayWhole) {
  // Other models' names, and a decoder's that do not read as one.
  for (const std::string name : {"fc1.weight", "lm_head.weight", "h.0.attn.c_attn.weight", "conv1.bias", "",
                                 "model.", "model.layers.", "model.layers.x.q_proj.weight", "model.layers.12"})
    EXPECT_EQ(short_tensor_name(name), name);
}

}  // namespace
}  // namespace vkamp::test
