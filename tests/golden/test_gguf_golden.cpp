// vkamp on GGUF files that llama.cpp's own code made, against llama.cpp's
// own logits (tests/golden/gguf/make_gguf_fixtures.py: convert_hf_to_gguf.py
// wrote the F16 files, llama_model_quantize the quantized ones, libllama on
// the CPU decoded 12 ids and 6 greedy tokens on each). vkamp reads each file
// with its own loader (read_gguf_config, the q/k rows back in Hugging
// Face's order) and runs the Llama graph's forward in fp32 on the 18 ids:
// every position's logits within gguf_golden.hpp's llamacpp_bound, and the
// same greedy tokens wherever llama.cpp's choice is clear of the bound.
//
// Adapters out: vkamp writes a LoRA adapter as GGUF (write_gguf_adapter)
// whose bytes are the committed <model>_adapter.gguf, on which llama.cpp
// (llama_adapter_lora_init) computed its logits; vkamp's LoRA graph with
// the same A and B gives them.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "gguf_golden.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::test {
namespace {

class GgufGolden : public GpuTestP<std::string> {};

TEST_P(GgufGolden, LogitsAndGreedyTokensMatchLlamaCpp) {
  const std::string name = GetParam();
  const io::GgufFile f = io::GgufFile::open(gguf_fixture(name + ".gguf"));
  if (const std::string missing = missing_dequantization(f); !missing.empty())
    GTEST_SKIP() << name << ": " << missing;
  const models::LlamaConfig cfg = models::read_gguf_config(f);
  const LlamaCppRun r = llamacpp_run(name);
  const uint32_t T = uint32_t(r.ids.size()), V = cfg.vocab_size;
  ASSERT_EQ(r.logits.size(), size_t(T) * V);

  train::Model m(ctx(), models::llama_graph(cfg, T), Format::F32, 1, /*seed=*/1, false, false);
  load_gguf_weights(f, m);
  const std::vector<float> z = forward_logits(m, Format::F32, r.ids, V);

  bool quantized = false;
  for (const io::GgufTensor& t : f.tensors()) quantized |= quant::is_quantized(t.type);
  const double bound = llamacpp_bound(cfg, T, quantized);
  expect_close(name + " logits against llama.cpp", z, r.logits, bound);
  const int clear = expect_same_greedy(name, z, r, V, bound);
  EXPECT_GE(clear, 3) << "most greedy steps should be clear of the bound";
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class GgufAdapterGolden : public GpuTestP<std::string> {};

TEST_P(GgufAdapterGolden, LlamaCppAppliesVkampsAdapterAsVkampDoes) {
  const std::string name = GetParam();
  const io::GgufFile f = io::GgufFile::open(gguf_fixture(name + "_f16.gguf"));
  const models::LlamaConfig cfg = models::read_gguf_config(f);
  const LlamaCppRun plain = llamacpp_run(name + "_f16");  // without the adapter (as long)
  const uint32_t T = uint32_t(plain.ids.size()), V = cfg.vocab_size;
  models::LoraConfig lc;
  lc.rank = 4;
  lc.alpha = 8;
  train::Model m(ctx(), models::llama_graph(cfg, T, lc), Format::F32, 1, /*seed=*/1, false, false);
  load_gguf_weights(f, m);
  std::vector<float> master = m.read_master();
  uint32_t index = 0;
  for (const graph::ParamTensor& t : m.tensors()) {
    const std::vector<float> v = adapter_fixture_values(m.graph().tensor(t.name), index++);
    std::copy(v.begin(), v.end(), master.begin() + t.offset);
  }
  m.write_master(master);
  auto values = [&](const std::string& adapter) {
    for (const graph::ParamTensor& t : m.tensors())
      if (t.name == adapter) return std::vector<float>(master.begin() + t.offset, master.begin() + t.offset + t.size);
    throw std::runtime_error("no adapter " + adapter);
  };

  // The adapter llama.cpp read is the one vkamp writes now.
  const std::string fixture = gguf_fixture(name + "_adapter.gguf");
  if (std::getenv("VKAMP_WRITE_GGUF_ADAPTER")) models::write_gguf_adapter(fixture, m.graph(), lc, cfg, values);
  const std::string written = (std::filesystem::temp_directory_path() /
                               ("vkamp-adapter-" + std::to_string(platform::process_id()) + ".gguf")).string();
  models::write_gguf_adapter(written, m.graph(), lc, cfg, values);
  const std::vector<uint8_t> mine = file_bytes(written);
  std::filesystem::remove(written);
  EXPECT_TRUE(mine == file_bytes(fixture)) << "vkamp's adapter.gguf differs from " << fixture;

  const LlamaCppRun r = llamacpp_run(name + "_f16+adapter");
  ASSERT_EQ(r.ids.size(), T);
  const std::vector<float> z = forward_logits(m, Format::F32, r.ids, V);
  // F32 adapters: llama.cpp multiplies them without rounding their inputs;
  // each adapted projection adds sums of `in` and r terms (lora_bounds').
  const double adapted = double(cfg.num_hidden_layers) * lc.targets.size();
  const double bound = llamacpp_bound(cfg, T, false,
                                      adapted * (std::sqrt(double(cfg.intermediate_size)) + std::sqrt(double(lc.rank))));
  expect_close(name + " with the adapter against llama.cpp", z, r.logits, bound);
  EXPECT_GE(expect_same_greedy(name + " with the adapter", z, r, V, bound), 3);
  // The adapter matters: llama.cpp's logits without it are far outside the bound.
  EXPECT_FALSE(close_to(std::vector<float>(plain.logits.begin(), plain.logits.begin() + r.prompt * V),
                        to_double(std::vector<float>(r.logits.begin(), r.logits.begin() + r.prompt * V)), bound));
}

INSTANTIATE_TEST_SUITE_P(LlamaCppFile, GgufAdapterGolden, ::testing::Values("llama", "qwen2"));

INSTANTIATE_TEST_SUITE_P(LlamaCppFile, GgufGolden,
                         ::testing::Values("llama_f16", "llama_q8_0", "llama_q4_0", "llama_q4_k_m", "qwen2_f16",
                                           "qwen2_q5_k_m"));

}  // namespace
}  // namespace vkamp::test
