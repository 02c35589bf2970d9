// Hugging Face model folders read by models/hf_checkpoint.hpp: the golden
// fixtures' folders (config.json's fields and transformers' defaults, one
// file and two shards), and each way a folder can be wrong, a ConfigError
// naming the file and what config.json implies: an unknown architecture,
// missing fields, an unsupported rope_scaling or activation, a missing,
// extra, mis-shaped or integer tensor, a shard index naming a path.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/rejected_with.hpp"
#include "support/test_paths.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/graph/param_layout.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/models/hf_checkpoint.hpp"

namespace vkamp::models {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string fixture(const std::string& name) { return VKAMP_TEST_DIR(VKAMP_GOLDEN_DIR) + "/" + name; }

class HfCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vkamp-hf-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                        "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A copy of a fixture folder, with config.json edited by `edit`.
  std::string copy(const std::string& name, const std::function<void(Json&)>& edit = {}) {
    for (const auto& e : fs::directory_iterator(fixture(name))) fs::copy_file(e.path(), dir_ / e.path().filename());
    if (edit) {
      Json j;
      std::ifstream(dir_ / "config.json") >> j;
      edit(j);
      std::ofstream(dir_ / "config.json") << j.dump(2);
    }
    return dir_.string();
  }

  // The folder's weights into the graph's layout.
  void load(const std::string& dir) {
    const LlamaConfig c = read_hf_config(dir);
    const graph::Graph g = llama_graph(c, 8);
    size_t loaded = 0;
    load_hf_weights(dir, g, [&](const std::string& name, std::vector<float>&& v) {
      EXPECT_EQ(v.size(), graph::elements(g.tensor(name))) << name;
      ++loaded;
    });
    EXPECT_EQ(loaded, g.param_indices().size());
  }

  // model.safetensors rewritten by `edit` on its tensors.
  void rewrite_weights(const std::function<void(io::TensorFile&)>& edit) {
    const std::string p = (dir_ / "model.safetensors").string();
    io::TensorFile f = io::read_safetensors(p);
    edit(f);
    io::write_safetensors(p, f);
  }

  fs::path dir_;
};

TEST_F(HfCheckpoint, ReadsEachFixturesConfig) {
  const LlamaConfig a = read_hf_config(fixture("llama_gqa"));
  EXPECT_EQ(a.architecture, "LlamaForCausalLM");
  EXPECT_EQ(a.vocab_size, 37u);
  EXPECT_EQ(a.num_key_value_heads, 2u);
  EXPECT_EQ(a.head_size(), 6u);
  EXPECT_FALSE(a.tie_word_embeddings);
  EXPECT_FALSE(a.attention_bias);
  EXPECT_EQ(a.rope.theta, 10000);
  EXPECT_EQ(a.rope.factor, 0);
  const LlamaConfig b = read_hf_config(fixture("llama3_tied"));
  EXPECT_EQ(b.head_size(), 12u) << "head_dim from config.json, not hidden_size / heads";
  EXPECT_TRUE(b.tie_word_embeddings);
  EXPECT_EQ(b.rope.factor, 8);
  EXPECT_EQ(b.rope.original_max_positions, 64u);
  EXPECT_EQ(b.rms_norm_eps, 1e-5);
  const LlamaConfig c = read_hf_config(fixture("qwen2_bias"));
  EXPECT_TRUE(c.attention_bias) << "Qwen2's q, k and v have biases";
  EXPECT_EQ(c.rope.theta, 1e6);
}

TEST_F(HfCheckpoint, LoadsOneFileAndShards) {
  for (const char* name : {"llama_gqa", "llama3_tied", "qwen2_bias"}) {
    SCOPED_TRACE(name);
    EXPECT_NO_THROW(load(fixture(name)));
  }
}

TEST_F(HfCheckpoint, AnUnknownArchitectureNamesItAndTheSupportedOnes) {
  const std::string d = copy("llama_gqa", [](Json& j) { j["architectures"] = {"GPTNeoXForCausalLM"}; });
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { read_hf_config(d); }, "config.json",
                                               "GPTNeoXForCausalLM is not supported (supported: LlamaForCausalLM, "
                                               "MistralForCausalLM, Qwen2ForCausalLM)"));
}

TEST_F(HfCheckpoint, BadConfigFields) {
  struct Case {
    std::function<void(Json&)> edit;
    std::string phrase;
  };
  const Case cases[] = {
      {[](Json& j) { j.erase("hidden_size"); }, "\"hidden_size\" is missing"},
      {[](Json& j) { j["num_hidden_layers"] = -2; }, "\"num_hidden_layers\" is not a count: -2"},
      {[](Json& j) { j["hidden_act"] = "gelu"; }, "hidden_act \"gelu\" is not supported"},
      {[](Json& j) { j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}}; },
       "rope_scaling of type 'yarn' is not supported"},
      {[](Json& j) { j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}}; },
       "rope_scaling: \"low_freq_factor\" is missing"},
      {[](Json& j) { j["tie_word_embeddings"] = "yes"; }, "\"tie_word_embeddings\" is not true or false"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.phrase);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const std::string d = copy("llama_gqa", c.edit);
    EXPECT_TRUE(test::rejected_with<ConfigError>([&] { read_hf_config(d); }, "config.json", c.phrase));
  }
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { read_hf_config(dir_.string() + "/nowhere"); }, "nowhere",
                                               "cannot open"));
}

TEST_F(HfCheckpoint, AMissingTensorNamesItAndItsShape) {
  const std::string d = copy("llama_gqa");
  rewrite_weights([](io::TensorFile& f) {
    std::erase_if(f.tensors, [](const io::Tensor& t) { return t.name == "model.layers.1.self_attn.k_proj.weight"; });
  });
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { load(d); }, "model.layers.1.self_attn.k_proj.weight",
                                               "[12, 24] is missing"));
}

TEST_F(HfCheckpoint, AMisShapedTensorNamesBothShapes) {
  const std::string d = copy("llama_gqa");
  rewrite_weights([](io::TensorFile& f) {
    for (io::Tensor& t : f.tensors)
      if (t.name == "model.layers.0.self_attn.k_proj.weight") t.shape = {24, 12};
  });
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { load(d); }, "model.safetensors",
                                               "'model.layers.0.self_attn.k_proj.weight' is [24, 12] but config.json "
                                               "implies [12, 24]"));
}

TEST_F(HfCheckpoint, AnExtraTensorIsRefusedButOldRotaryTablesAreNot) {
  const std::string d = copy("llama_gqa");
  rewrite_weights([](io::TensorFile& f) {
    f.tensors.push_back({"model.layers.0.self_attn.rotary_emb.inv_freq", io::DType::F32, {3}, std::vector<uint8_t>(12)});
  });
  EXPECT_NO_THROW(load(d));
  rewrite_weights([](io::TensorFile& f) {
    f.tensors.push_back({"model.layers.2.mlp.up_proj.weight", io::DType::F32, {1}, std::vector<uint8_t>(4)});
  });
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { load(d); }, "model.safetensors",
                                               "'model.layers.2.mlp.up_proj.weight' is not a parameter of "
                                               "LlamaForCausalLM"));
}

TEST_F(HfCheckpoint, AnIntegerTensorNamesItsDtype) {
  const std::string d = copy("llama_gqa");
  rewrite_weights([](io::TensorFile& f) {
    for (io::Tensor& t : f.tensors)
      if (t.name == "model.norm.weight") t.dtype = io::DType::I32;
  });
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { load(d); }, "model.norm.weight", "has dtype I32"));
}

TEST_F(HfCheckpoint, AShardIndexMayNotNameAPath) {
  const std::string d = copy("qwen2_bias");
  Json j;
  std::ifstream(dir_ / "model.safetensors.index.json") >> j;
  j["weight_map"]["model.norm.weight"] = "../elsewhere.safetensors";
  std::ofstream(dir_ / "model.safetensors.index.json") << j.dump();
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { load(d); }, "model.safetensors.index.json",
                                               "'model.norm.weight' is not a file name in the folder"));
  fs::remove(dir_ / "model.safetensors.index.json");
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { load(d); }, d,
                                               "neither model.safetensors nor model.safetensors.index.json"));
}

}  // namespace
}  // namespace vkamp::models
