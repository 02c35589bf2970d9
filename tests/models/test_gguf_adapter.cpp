// LoRA adapters written as GGUF (write_gguf_adapter), read back with vkamp's
// own GGUF reader: llama.cpp's keys and types (llama_adapter_lora_init reads
// general.type, general.architecture, adapter.type and the f32
// adapter.lora.alpha), convert_lora_to_gguf.py's tensor names and dims (A
// {in, r}, B {r, out}), 32-byte aligned data, every value as given, and
// the rows of a llama base's q and k B in the converter's order, written
// here from the converter's formula (reshape(heads, 2, hd / 2, r),
// swapaxes(1, 2)) rather than from vkamp's gguf_rotary_rows. Whether
// llama.cpp itself applies the file as vkamp does: test_gguf_golden.cpp.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "support/rejected_with.hpp"
#include "support/test_paths.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/io/gguf.hpp"
#include "vkamp/models/gguf_adapter.hpp"
#include "vkamp/models/hf_checkpoint.hpp"

namespace vkamp::models {
namespace {

namespace fs = std::filesystem;

class GgufAdapter : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vkamp-gguf-adapter-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                        "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    cfg_ = read_hf_config(VKAMP_TEST_DIR(VKAMP_GOLDEN_DIR) + "/llama_gqa");  // 4 heads of 6, 2 key/value heads
    lora_.rank = 2;
    lora_.alpha = 5;
    lora_.targets = {"q_proj", "k_proj", "v_proj", "down_proj"};
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A value per element that says which tensor and element it is.
  static std::vector<float> values_of(const graph::Graph& g, const std::string& name) {
    std::vector<float> v(graph::elements(g.tensor(name)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = float(name.size()) + 0.001f * float(i);
    return v;
  }
  std::string path() const { return (dir_ / "adapter.gguf").string(); }
  void write(const graph::Graph& g, const LlamaConfig& c) {
    write_gguf_adapter(path(), g, lora_, c, [&](const std::string& n) { return values_of(g, n); });
  }
  static std::vector<float> floats(const io::GgufTensor& t) {
    std::vector<float> v(t.elements());
    std::memcpy(v.data(), t.data, v.size() * 4);
    return v;
  }

  fs::path dir_;
  LlamaConfig cfg_;
  LoraConfig lora_;
};

// convert_hf_to_gguf.py's LlamaModel.permute on the rows of B: file row
// h hd + 2 i + s holds Hugging Face's row h hd + s hd/2 + i.
std::vector<float> converter_rows(const std::vector<float>& b, uint32_t heads, uint32_t r) {
  const size_t rows = b.size() / r, hd = rows / heads, half = hd / 2;
  std::vector<float> out(b.size());
  for (size_t h = 0; h < heads; ++h)
    for (size_t i = 0; i < half; ++i)
      for (size_t s = 0; s < 2; ++s)
        for (size_t k = 0; k < r; ++k) out[(h * hd + 2 * i + s) * r + k] = b[(h * hd + s * half + i) * r + k];
  return out;
}

TEST_F(GgufAdapter, WritesLlamaCppsKeysNamesDimsAndPermutedRows) {
  const graph::Graph g = llama_graph(cfg_, 8, lora_);
  write(g, cfg_);
  const io::GgufFile f = io::GgufFile::open(path());
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.string("general.architecture"), "llama");
  EXPECT_EQ(f.string("general.type"), "adapter");
  EXPECT_EQ(f.string("adapter.type"), "lora");
  ASSERT_TRUE(f.find("adapter.lora.alpha"));
  EXPECT_EQ(f.find("adapter.lora.alpha")->type, io::GgufType::F32) << "llama.cpp reads it with gguf_get_val_f32";
  EXPECT_EQ(f.number("adapter.lora.alpha"), 5.0);
  ASSERT_EQ(f.tensors().size(), 2u * 2 * 4);  // 2 layers, 4 targets, A and B
  const uint32_t hd = cfg_.head_size();
  for (const io::GgufTensor& t : f.tensors()) {
    EXPECT_EQ((t.offset - f.tensors()[0].offset) % 32, 0u) << t.name;
    EXPECT_EQ(t.type, quant::GgmlType::F32) << t.name;
  }
  const io::GgufTensor* qa = f.find_tensor("blk.1.attn_q.weight.lora_a");
  const io::GgufTensor* qb = f.find_tensor("blk.1.attn_q.weight.lora_b");
  const io::GgufTensor* kb = f.find_tensor("blk.0.attn_k.weight.lora_b");
  const io::GgufTensor* vb = f.find_tensor("blk.0.attn_v.weight.lora_b");
  const io::GgufTensor* db = f.find_tensor("blk.1.ffn_down.weight.lora_b");
  ASSERT_TRUE(qa && qb && kb && vb && db);
  EXPECT_EQ(qa->dims, (std::vector<uint64_t>{cfg_.hidden_size, 2}));
  EXPECT_EQ(qb->dims, (std::vector<uint64_t>{2, cfg_.num_attention_heads * hd}));
  EXPECT_EQ(kb->dims, (std::vector<uint64_t>{2, cfg_.num_key_value_heads * hd}));
  EXPECT_EQ(db->dims, (std::vector<uint64_t>{2, cfg_.hidden_size}));
  const std::string q = "model.layers.1.self_attn.q_proj.", k = "model.layers.0.self_attn.k_proj.";
  EXPECT_EQ(floats(*qa), values_of(g, q + "lora_A.weight")) << "A as PEFT holds it";
  EXPECT_EQ(floats(*qb), converter_rows(values_of(g, q + "lora_B.weight"), cfg_.num_attention_heads, 2));
  EXPECT_EQ(floats(*kb), converter_rows(values_of(g, k + "lora_B.weight"), cfg_.num_key_value_heads, 2));
  EXPECT_EQ(floats(*vb), values_of(g, "model.layers.0.self_attn.v_proj.lora_B.weight")) << "v keeps its rows";
  EXPECT_EQ(floats(*db), values_of(g, "model.layers.1.mlp.down_proj.lora_B.weight"));
}

TEST_F(GgufAdapter, Qwen2KeepsHuggingFacesRows) {
  const LlamaConfig c = read_hf_config(VKAMP_TEST_DIR(VKAMP_GOLDEN_DIR) + "/qwen2_bias");
  const graph::Graph g = llama_graph(c, 8, lora_);
  write(g, c);
  const io::GgufFile f = io::GgufFile::open(path());
  EXPECT_EQ(f.string("general.architecture"), "qwen2");
  const io::GgufTensor* qb = f.find_tensor("blk.0.attn_q.weight.lora_b");
  ASSERT_TRUE(qb);
  EXPECT_EQ(floats(*qb), values_of(g, "model.layers.0.self_attn.q_proj.lora_B.weight"));
}

TEST_F(GgufAdapter, NamesFollowLlamaCppsTensorMap) {
  EXPECT_EQ(gguf_adapter_name("model.layers.0.self_attn.q_proj.lora_A.weight"), "blk.0.attn_q.weight.lora_a");
  EXPECT_EQ(gguf_adapter_name("model.layers.12.self_attn.o_proj.lora_B.weight"), "blk.12.attn_output.weight.lora_b");
  EXPECT_EQ(gguf_adapter_name("model.layers.3.mlp.gate_proj.lora_B.weight"), "blk.3.ffn_gate.weight.lora_b");
  EXPECT_THROW(gguf_adapter_name("model.layers.3.mlp.gate_proj.weight"), ConfigError);
}

TEST_F(GgufAdapter, NeverLeavesAPartialFile) {
  const graph::Graph g = llama_graph(cfg_, 8, lora_);
  { std::ofstream(path()) << "the old adapter"; }
  int calls = 0;
  auto failing = [&](const std::string& n) {
    if (++calls == 5) throw ConfigError("cut off");
    return values_of(g, n);
  };
  EXPECT_THROW(write_gguf_adapter(path(), g, lora_, cfg_, failing), ConfigError);
  std::ifstream in(path());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "the old adapter") << "the old file stays whole";
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u) << "no temporary file is left";
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { write(llama_graph(cfg_, 8), cfg_); }, "adapter.gguf",
                                               "no LoRA adapters"));
}

// The base's 2-D weights (Hugging Face name -> {out, in}), as the reader
// checks an adapter against them.
std::map<std::string, std::pair<uint64_t, uint64_t>> weights_of(const LlamaConfig& c) {
  std::map<std::string, std::pair<uint64_t, uint64_t>> out;
  LoraConfig frozen;
  frozen.frozen_base = true;
  const graph::Graph g = llama_graph(c, 1, frozen);
  for (const graph::Tensor& t : g.tensors())
    if (t.dims.size() == 2) out[t.name] = {t.dims[0], t.dims[1]};
  return out;
}

// Read back, every pair is PEFT's A and B again (B's q and k rows back in
// Hugging Face's order), with the file's rank and alpha.
TEST_F(GgufAdapter, ReadsBackWhatItWrote) {
  const graph::Graph g = llama_graph(cfg_, 8, lora_);
  write(g, cfg_);
  const GgufLoraAdapter a = read_gguf_adapter(io::GgufFile::open(path()), cfg_, weights_of(cfg_));
  EXPECT_EQ(a.size(), size_t(cfg_.num_hidden_layers) * lora_.targets.size());
  for (const auto& [weight, p] : a) {
    const std::string stem = weight.substr(0, weight.size() - 7);  // less ".weight"
    EXPECT_EQ(p.lora.rank, 2u);
    EXPECT_EQ(p.lora.alpha, 5);
    EXPECT_EQ(p.a, values_of(g, stem + ".lora_A.weight")) << weight;
    EXPECT_EQ(p.b, values_of(g, stem + ".lora_B.weight")) << weight;
  }
}

// An adapter for another base is refused as llama.cpp refuses it, naming
// the file and the key or tensor: another architecture, other shapes, a
// model file instead of an adapter, a weight the model lacks.
TEST_F(GgufAdapter, RefusesAnAdapterForAnotherBase) {
  write(llama_graph(cfg_, 8, lora_), cfg_);
  const io::GgufFile f = io::GgufFile::open(path());
  const LlamaConfig qwen = read_hf_config(VKAMP_TEST_DIR(VKAMP_GOLDEN_DIR) + "/qwen2_bias");
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { read_gguf_adapter(f, qwen, weights_of(qwen)); }, path(),
                                               "general.architecture is llama, but the model is qwen2"));
  LlamaConfig wider = cfg_;
  wider.intermediate_size += 8;
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { read_gguf_adapter(f, wider, weights_of(wider)); }, path(),
                                               "do not fit model.layers.0.mlp.down_proj.weight"));
  LlamaConfig shallower = cfg_;
  shallower.num_hidden_layers = 1;
  EXPECT_TRUE(test::rejected_with<ConfigError>([&] { read_gguf_adapter(f, shallower, weights_of(shallower)); }, path(),
                                               "which the model does not have"));
  const std::string model = VKAMP_TEST_DIR(VKAMP_GOLDEN_DIR) + "/gguf/llama_f16.gguf";
  EXPECT_TRUE(test::rejected_with<ConfigError>(
      [&] { read_gguf_adapter(io::GgufFile::open(model), cfg_, weights_of(cfg_)); }, model,
      "general.type is \"model\", not \"adapter\""));
}

}  // namespace
}  // namespace vkamp::models
