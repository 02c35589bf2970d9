// PEFT adapter folders: what write_peft_adapter writes (PEFT's tensor names
// and shapes, adapter_config.json's fields, nothing left half-written) and
// what read_peft_config / load_peft_adapter read back, and the folders they
// refuse, each a ConfigError naming the file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/rejected_with.hpp"
#include "support/test_paths.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/models/hf_checkpoint.hpp"
#include "vkamp/models/peft_adapter.hpp"

namespace vkamp::models {
namespace {

namespace fs = std::filesystem;

class PeftAdapter : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vkamp-peft-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                        "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    cfg_ = read_hf_config(VKAMP_TEST_DIR(VKAMP_GOLDEN_DIR) + "/llama_gqa");
    lora_.rank = 2;
    lora_.alpha = 4;
    lora_.targets = {"q_proj", "v_proj", "down_proj"};
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A value per adapter element that says which tensor and element it is.
  static std::vector<float> values_of(const graph::Graph& g, const std::string& name) {
    std::vector<float> v(graph::elements(g.tensor(name)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = float(name.size()) + 0.001f * float(i);
    return v;
  }

  void write(const graph::Graph& g) {
    write_peft_adapter(dir_.string(), g, lora_, "TinyLlama/TinyLlama-1.1B-Chat-v1.0",
                       [&](const std::string& n) { return values_of(g, n); });
  }

  fs::path dir_;
  LlamaConfig cfg_;
  LoraConfig lora_;
};

TEST_F(PeftAdapter, WritesPeftsNamesShapesAndConfig) {
  const graph::Graph g = llama_graph(cfg_, 8, lora_);
  write(g);
  const io::TensorFile f = io::read_safetensors((dir_ / "adapter_model.safetensors").string());
  ASSERT_EQ(f.tensors.size(), 2u * 2 * 3);  // 2 layers, 3 targets, A and B
  const io::Tensor* a = f.find("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight");
  const io::Tensor* b = f.find("base_model.model.model.layers.1.mlp.down_proj.lora_B.weight");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->shape, (std::vector<uint64_t>{2, 24}));  // [r, in]
  EXPECT_EQ(b->shape, (std::vector<uint64_t>{24, 2}));  // [out, r]
  EXPECT_EQ(a->dtype, io::DType::F32);
  EXPECT_EQ(f.floats(a->name, "a"), values_of(g, "model.layers.0.self_attn.q_proj.lora_A.weight"));

  nlohmann::json c;
  std::ifstream(dir_ / "adapter_config.json") >> c;
  EXPECT_EQ(c["peft_type"], "LORA");
  EXPECT_EQ(c["task_type"], "CAUSAL_LM");
  EXPECT_EQ(c["r"], 2);
  EXPECT_EQ(c["lora_alpha"], 4.0);
  EXPECT_EQ(c["lora_dropout"], 0.0);
  EXPECT_EQ(c["bias"], "none");
  EXPECT_EQ(c["target_modules"], (nlohmann::json{"q_proj", "v_proj", "down_proj"}));
  EXPECT_EQ(c["base_model_name_or_path"], "TinyLlama/TinyLlama-1.1B-Chat-v1.0");
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_NE(e.path().extension(), ".tmp") << "a temporary file was left: " << e.path();
}

TEST_F(PeftAdapter, ReadsBackWhatItWrote) {
  const graph::Graph g = llama_graph(cfg_, 8, lora_);
  write(g);
  const LoraConfig back = read_peft_config(dir_.string());
  EXPECT_EQ(back.rank, 2u);
  EXPECT_EQ(back.alpha, 4.0);
  EXPECT_EQ(back.targets, lora_.targets);
  size_t n = 0;
  load_peft_adapter(dir_.string(), llama_graph(cfg_, 8, back), [&](const std::string& name, std::vector<float>&& v) {
    EXPECT_EQ(v, values_of(g, name)) << name;
    ++n;
  });
  EXPECT_EQ(n, 12u);
}

TEST_F(PeftAdapter, RefusesAdaptersThatDoNotFit) {
  write(llama_graph(cfg_, 8, lora_));
  LoraConfig other = lora_;
  other.rank = 4;
  auto ignore = [](const std::string&, std::vector<float>&&) {};
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { load_peft_adapter(dir_.string(), llama_graph(cfg_, 8, other), ignore); },
                                               "adapter_model.safetensors", "wrong shape"));
  other = lora_;
  other.targets = {"q_proj"};
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { load_peft_adapter(dir_.string(), llama_graph(cfg_, 8, other), ignore); },
                                               "adapter_model.safetensors", "is not an adapter of this model"));
  other.targets = {"q_proj", "v_proj", "down_proj", "o_proj"};
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { load_peft_adapter(dir_.string(), llama_graph(cfg_, 8, other), ignore); },
                                               "o_proj.lora_A.weight", "is missing"));
  nlohmann::json c;
  std::ifstream(dir_ / "adapter_config.json") >> c;
  c["use_dora"] = true;
  std::ofstream(dir_ / "adapter_config.json") << c.dump();
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { read_peft_config(dir_.string()); }, "adapter_config.json",
                                               "DoRA and rsLoRA adapters are not supported"));
  c["use_dora"] = false;
  c["peft_type"] = "IA3";
  std::ofstream(dir_ / "adapter_config.json") << c.dump();
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { read_peft_config(dir_.string()); }, "adapter_config.json",
                                               "peft_type is not \"LORA\""));
}

}  // namespace
}  // namespace vkamp::models
