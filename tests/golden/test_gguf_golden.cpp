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
// the same A and B gives them, on the F16 bases and (QLoRA: the base held
// in its blocks on the GPU) on the quantized ones. --merge FILE.gguf's
// output (F16, or the base's types) is checked against llama.cpp's run on
// the very same bytes (fingerprinted).
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "app/llama_generate.hpp"
#include "gguf_golden.hpp"
#include "support/scratch_dir.hpp"
#include "vkamp/models/gguf_merge.hpp"
#include "vkamp/models/llama_decoder.hpp"
#include "vkamp/models/peft_adapter.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::test {
namespace {

class GgufGolden : public GpuTestP<std::string> {};

TEST_P(GgufGolden, LogitsAndGreedyTokensMatchLlamaCpp) {
  const std::string name = GetParam();
  const io::GgufFile f = io::GgufFile::open(gguf_fixture(name + ".gguf"));
  const models::LlamaConfig cfg = models::read_gguf_config(f);
  const LlamaCppRun r = llamacpp_run(name);
  const uint32_t T = uint32_t(r.ids.size()), V = cfg.vocab_size;
  ASSERT_EQ(r.logits.size(), size_t(T) * V);

  train::Model m(ctx(), models::llama_graph(cfg, T), Format::F32, 1, /*seed=*/1, false, false);
  train::load_gguf_weights(f, m);
  const std::vector<float> z = forward_logits(m, Format::F32, r.ids, V);

  bool quantized = false;
  for (const io::GgufTensor& t : f.tensors()) quantized |= quant::is_quantized(t.type);
  const double bound = llamacpp_bound(cfg, T, quantized);
  expect_close(name + " logits against llama.cpp", z, r.logits, bound);
  // The 8-bit bound's margin (about 2 logits here) leaves few greedy steps
  // of a quantized file clear enough to check, maybe none; F16's, most.
  const int clear = expect_same_greedy(name, z, r, V, bound);
  if (!quantized) {
    EXPECT_GE(clear, 3) << "the greedy check must not be vacuous";
  }
}

// vkamp-generate's decoder on a file (app::load_frozen_llama: the
// quantized matrices in the file's own blocks, a PEFT adapter folder folded
// into those it adapts, held in the run's format): the ids appended one at
// a time give llama.cpp's logits at every position within `bound`, and the
// prompt as one prefill gives them after its last id (one row of 18: a
// wrong row would add about 1/18 of the logits' mean square).
void expect_decoder_gives(const app::FrozenLlama& frozen, const LlamaCppRun& r, double bound, const std::string& label) {
  const uint32_t T = uint32_t(r.ids.size()), V = frozen.config.vocab_size;
  models::LlamaDecoder decoder(ctx(), frozen.config, Format::F32, models::LlamaDecoder::frozen_weights(frozen.model->frozen()), T);
  std::vector<float> z;
  for (uint32_t id : r.ids) {
    const std::vector<float> row = decoder.append(id);
    z.insert(z.end(), row.begin(), row.end());
  }
  expect_close(label + " decoded, against llama.cpp", z, r.logits, bound);
  expect_same_greedy(label + " decoded", z, r, V, bound);
  decoder.reset();
  const std::vector<float> last = decoder.prefill(std::vector<uint32_t>(r.ids.begin(), r.ids.begin() + r.prompt));
  ASSERT_EQ(last.size(), V);
  std::copy(last.begin(), last.end(), z.begin() + size_t(r.prompt - 1) * V);
  expect_close(label + " prefilled, against llama.cpp", z, r.logits, bound);
}

TEST_P(GgufGolden, TheDecoderOverTheFilesBlocksGivesLlamaCppsLogits) {
  const std::string name = GetParam();
  const io::GgufFile f = io::GgufFile::open(gguf_fixture(name + ".gguf"));
  const models::LlamaConfig cfg = models::read_gguf_config(f);
  int quantized = 0, held = 0;
  for (const io::GgufTensor& t : f.tensors()) quantized += quant::is_quantized(t.type);
  const app::FrozenLlama frozen = app::load_frozen_llama(ctx(), gguf_fixture(name + ".gguf"), "", Format::F32, 1);
  for (const graph::FrozenTensor& t : frozen.model->frozen().tensors()) held += t.blocks.has_value();
  EXPECT_EQ(held, quantized) << "every quantized matrix stays in the file's blocks";
  const LlamaCppRun r = llamacpp_run(name);
  expect_decoder_gives(frozen, r, llamacpp_bound(cfg, uint32_t(r.ids.size()), quantized > 0), name);
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Whether the file of this fingerprint is the one make_gguf_fixtures.py had
// llama.cpp run as `run` (its FNV-1a hash, recorded beside the run).
::testing::AssertionResult llamacpp_ran(const std::string& run, uint64_t fingerprint) {
  const io::TensorFile runs = io::read_safetensors(gguf_fixture("llamacpp.safetensors"));
  const auto recorded = runs.metadata.find(run + ".fnv1a64");
  if (recorded == runs.metadata.end())
    return ::testing::AssertionFailure() << "make_gguf_fixtures.py recorded no run of " << run;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fingerprint));
  if (recorded->second != hex)
    return ::testing::AssertionFailure() << "vkamp's " << run << " file differs from the one llama.cpp ran";
  return ::testing::AssertionSuccess();
}

// A LoRA model over the file's base with the adapter fixture's values; returns
// the values by adapter name.
std::map<std::string, std::vector<float>> load_fixture_adapters(train::Model& m) {
  std::vector<float> master = m.read_master();
  std::map<std::string, std::vector<float>> out;
  for (const graph::ParamTensor& t : m.tensors()) {
    const std::vector<float> v = adapter_fixture_values(m.graph().tensor(t.name));
    std::copy(v.begin(), v.end(), master.begin() + t.offset);
    out[t.name] = v;
  }
  m.write_master(master);
  return out;
}

// FNV-1a, 64 bits (make_gguf_fixtures.py's fingerprint of a file).
uint64_t fnv1a64(const std::vector<uint8_t>& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

class GgufAdapterGolden : public GpuTestP<std::string> {};

TEST_P(GgufAdapterGolden, LlamaCppAppliesVkampsAdapterAsVkampDoes) {
  const std::string name = GetParam();
  const io::GgufFile f = io::GgufFile::open(gguf_fixture(name + "_f16.gguf"));
  const models::LlamaConfig cfg = models::read_gguf_config(f);
  const LlamaCppRun plain = llamacpp_run(name + "_f16");  // without the adapter (as long)
  const uint32_t T = uint32_t(plain.ids.size()), V = cfg.vocab_size;
  const models::LoraConfig lc = fixture_lora();
  train::Model m(ctx(), models::llama_graph(cfg, T, lc), Format::F32, 1, /*seed=*/1, false, false);
  train::load_gguf_weights(f, m);
  const std::map<std::string, std::vector<float>> adapters = load_fixture_adapters(m);
  auto values = [&](const std::string& adapter) { return adapters.at(adapter); };

  // The adapter llama.cpp read is the one vkamp writes now.
  const std::string fixture = gguf_fixture(name + "_adapter.gguf");
  if (platform::get_env("VKAMP_WRITE_GGUF_ADAPTER")) models::write_gguf_adapter(fixture, m.graph(), lc, cfg, values);
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

// vkamp-generate --adapter FILE.gguf: the adapter file llama.cpp loaded
// above, read back and folded in (llama q and k rows un-permuted), gives
// llama.cpp's logits with it; and the same folded weights, bit for bit, as
// the same adapter from a PEFT folder.
TEST_P(GgufAdapterGolden, TheDecoderReadsTheAdapterFileLlamaCppRead) {
  const std::string name = GetParam();
  const std::string base = gguf_fixture(name + "_f16.gguf");
  const models::LlamaConfig cfg = models::read_gguf_config(io::GgufFile::open(base));
  const models::LoraConfig lc = fixture_lora();
  const LlamaCppRun r = llamacpp_run(name + "_f16+adapter");
  const app::FrozenLlama frozen = app::load_frozen_llama(ctx(), base, gguf_fixture(name + "_adapter.gguf"), Format::F32, 1);
  const double adapted = double(cfg.num_hidden_layers) * lc.targets.size();
  const double bound = llamacpp_bound(cfg, uint32_t(r.ids.size()), false,
                                      adapted * (std::sqrt(double(cfg.intermediate_size)) + std::sqrt(double(lc.rank))));
  expect_decoder_gives(frozen, r, bound, name + " with its adapter.gguf");

  const graph::Graph g = models::llama_graph(cfg, 8, lc);
  const ScratchDir dir("vkamp-adapter-file");
  const std::string peft = dir.file("adapter");
  models::write_peft_adapter(peft, g, lc, base, [&](const std::string& t) { return adapter_fixture_values(g.tensor(t)); });
  const app::FrozenLlama from_peft = app::load_frozen_llama(ctx(), base, peft, Format::F32, 1);
  for (const char* w : {"model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.k_proj.weight",
                        "model.layers.0.mlp.down_proj.weight"})
    EXPECT_EQ(frozen.model->frozen().read(w), from_peft.model->frozen().read(w)) << w;
}

INSTANTIATE_TEST_SUITE_P(LlamaCppFile, GgufAdapterGolden, ::testing::Values("llama", "qwen2"));

// QLoRA as vkamp-finetune runs it on a quantized GGUF base: the frozen
// matrices held on the GPU in the file's own blocks (hold_gguf_blocks; the
// GEMM and the embedding dequantize as they load), the fixture's adapter on
// every projection, against llama.cpp's logits with that adapter on the
// same file (the 8-bit bound, plus the adapters' fp32 sums).
class GgufQloraGolden : public GpuTestP<std::string> {};

TEST_P(GgufQloraGolden, BaseHeldInBlocksWithTheAdapterGivesLlamaCppsLogits) {
  const std::string name = GetParam();
  const io::GgufFile f = io::GgufFile::open(gguf_fixture(name + ".gguf"));
  const models::LlamaConfig cfg = models::read_gguf_config(f);
  const LlamaCppRun r = llamacpp_run(name + "+adapter");
  const uint32_t T = uint32_t(r.ids.size()), V = cfg.vocab_size;
  const models::LoraConfig lc = fixture_lora();
  graph::Graph g = models::llama_graph(cfg, T, lc);
  models::hold_gguf_blocks(g, f);
  int held = 0;
  for (const graph::Tensor& t : g.tensors()) held += t.blocks.has_value();
  EXPECT_GE(held, 7) << "every quantized matrix stays in its blocks";
  train::Model m(ctx(), std::move(g), Format::F32, 1, /*seed=*/1, false, false);
  train::load_gguf_weights(f, m);
  load_fixture_adapters(m);
  const std::vector<float> z = forward_logits(m, Format::F32, r.ids, V);
  const double adapted = double(cfg.num_hidden_layers) * lc.targets.size();
  const double bound = llamacpp_bound(cfg, T, true,
                                      adapted * (std::sqrt(double(cfg.intermediate_size)) + std::sqrt(double(lc.rank))));
  expect_close(name + " in blocks, with the adapter, against llama.cpp", z, r.logits, bound);
  expect_same_greedy(name + " in blocks, with the adapter", z, r, V, bound);  // few steps clear of the 8-bit bound
}

// vkamp-generate --adapter DIR on a quantized file: the fixture's adapter
// as a PEFT folder, folded into the matrices it adapts (which leave their
// blocks for the run's format), the rest read in their blocks; llama.cpp's
// logits with the adapter, within the bound above.
TEST_P(GgufQloraGolden, TheDecoderWithTheAdapterFoldedInGivesLlamaCppsLogits) {
  const std::string name = GetParam();
  const std::string file = gguf_fixture(name + ".gguf");
  const models::LlamaConfig cfg = models::read_gguf_config(io::GgufFile::open(file));
  const models::LoraConfig lc = fixture_lora();
  const graph::Graph g = models::llama_graph(cfg, 8, lc);
  const ScratchDir dir("vkamp-decoder-adapter");
  const std::string adapter = dir.file("adapter");
  models::write_peft_adapter(adapter, g, lc, file, [&](const std::string& t) { return adapter_fixture_values(g.tensor(t)); });
  const LlamaCppRun r = llamacpp_run(name + "+adapter");
  const double adapted = double(cfg.num_hidden_layers) * lc.targets.size();
  const double bound = llamacpp_bound(cfg, uint32_t(r.ids.size()), true,
                                      adapted * (std::sqrt(double(cfg.intermediate_size)) + std::sqrt(double(lc.rank))));
  const app::FrozenLlama frozen = app::load_frozen_llama(ctx(), file, adapter, Format::F32, 1);
  int in_blocks = 0, adapted_in_blocks = 0;
  for (const graph::FrozenTensor& t : frozen.model->frozen().tensors()) {
    in_blocks += t.blocks.has_value();
    for (const std::string& target : lc.targets)
      adapted_in_blocks += t.blocks && t.name.find("." + target + ".weight") != std::string::npos;
  }
  EXPECT_GT(in_blocks, 0) << "the matrices the adapter leaves alone stay in their blocks";
  EXPECT_EQ(adapted_in_blocks, 0) << "an adapted matrix is held in the run's format, the adapter folded in";
  expect_decoder_gives(frozen, r, bound, name + " with the adapter folded in");
}

INSTANTIATE_TEST_SUITE_P(LlamaCppFile, GgufQloraGolden,
                         ::testing::Values("llama_q8_0", "llama_q4_0", "llama_q4_k_m", "qwen2_q5_k_m"));

// --merge FILE.gguf: the base with the fixture's adapter merged in, as F16
// GGUF, read back by vkamp's own loader, gives llama.cpp's logits with the
// adapter applied (the F16 bound: the merged weights are one more 16-bit
// stage, which forward_roundings counts); its metadata is the base's, and a
// tensor without an adapter keeps the base's F16 bytes.
class GgufMergeGolden : public GpuTestP<std::string> {};

// A scratch GGUF file, removed when it goes (declared before the GgufFile
// that maps it, so removed after the map is gone, as Windows requires).
struct TempFile {
  explicit TempFile(const std::string& what)
      : path((std::filesystem::temp_directory_path() /
              ("vkamp-" + what + "-" + std::to_string(platform::process_id()) + ".gguf")).string()) {}
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
  std::string path;
};

TEST_P(GgufMergeGolden, MergedF16FileGivesLlamaCppsAdapterLogits) {
  const std::string name = GetParam();
  const io::GgufFile f = io::GgufFile::open(gguf_fixture(name + "_f16.gguf"));
  const models::LlamaConfig cfg = models::read_gguf_config(f);
  const uint32_t T = uint32_t(llamacpp_run(name + "_f16").ids.size()), V = cfg.vocab_size;
  const models::LoraConfig lc = fixture_lora();
  train::Model lora_model(ctx(), models::llama_graph(cfg, T, lc), Format::F32, 1, /*seed=*/1, false, false);
  const std::map<std::string, std::vector<float>> adapters = load_fixture_adapters(lora_model);
  const TempFile file("merged");
  models::write_merged_gguf(file.path, f, lora_model.graph(), lc, [&](const std::string& a) { return adapters.at(a); });
  if (const auto keep = platform::get_env("VKAMP_WRITE_GGUF_MERGED"))
    std::filesystem::copy_file(file.path, platform::path_from_utf8(*keep) / (name + "_merged.gguf"),
                               std::filesystem::copy_options::overwrite_existing);
  const uint64_t fingerprint = fnv1a64(file_bytes(file.path));
  const io::GgufFile merged = io::GgufFile::open(file.path);
  const LlamaCppRun r = llamacpp_run(name + "_f16+adapter");
  ASSERT_EQ(r.ids.size(), T);

  EXPECT_EQ(merged.unsigned_integer("general.file_type"), 1u);
  EXPECT_EQ(merged.strings("tokenizer.ggml.tokens"), f.strings("tokenizer.ggml.tokens"));
  EXPECT_EQ(merged.string("general.architecture"), f.string("general.architecture"));
  const io::GgufTensor* norm = merged.find_tensor("blk.0.attn_norm.weight");
  const io::GgufTensor* embd = merged.find_tensor("token_embd.weight");
  ASSERT_TRUE(norm && embd);
  EXPECT_EQ(norm->type, quant::GgmlType::F32);
  EXPECT_EQ(embd->type, quant::GgmlType::F16);
  EXPECT_EQ(0, std::memcmp(embd->data, f.find_tensor("token_embd.weight")->data, embd->bytes)) << "not adapted: as it was";

  train::Model m(ctx(), models::llama_graph(models::read_gguf_config(merged), T), Format::F32, 1, 1, false, false);
  train::load_gguf_weights(merged, m);
  const std::vector<float> z = forward_logits(m, Format::F32, r.ids, V);
  const double bound = llamacpp_bound(cfg, T, false);
  expect_close(name + " merged F16 against llama.cpp with the adapter", z, r.logits, bound);
  EXPECT_GE(expect_same_greedy(name + " merged", z, r, V, bound), 3);

  // llama.cpp ran this very file (its fingerprint is in the fixture): its
  // logits on it are vkamp's on it.
  ASSERT_TRUE(llamacpp_ran(name + "_merged", fingerprint));
  const LlamaCppRun on_merged = llamacpp_run(name + "_merged");
  const std::vector<float> zm = forward_logits(m, Format::F32, on_merged.ids, V);
  expect_close(name + " merged F16 against llama.cpp on that file", zm, on_merged.logits, bound);
  EXPECT_GE(expect_same_greedy(name + " merged, llama.cpp's run", zm, on_merged, V, bound), 3);
}

// A quantized base merges too (its blocks dequantized, the sum in F16): the
// merged file gives the LoRA graph's logits on that base, within one more
// 16-bit stage per weight.
TEST_P(GgufMergeGolden, QuantizedBaseMergesIntoF16) {
  const std::string name = GetParam();
  const io::GgufFile f = io::GgufFile::open(gguf_fixture(name + (name == "llama" ? "_q4_k_m.gguf" : "_q5_k_m.gguf")));
  const models::LlamaConfig cfg = models::read_gguf_config(f);
  const LlamaCppRun r = llamacpp_run(name + "_f16");
  const uint32_t T = uint32_t(r.ids.size()), V = cfg.vocab_size;
  const models::LoraConfig lc = fixture_lora();
  train::Model lora_model(ctx(), models::llama_graph(cfg, T, lc), Format::F32, 1, /*seed=*/1, false, false);
  train::load_gguf_weights(f, lora_model);
  const std::map<std::string, std::vector<float>> adapters = load_fixture_adapters(lora_model);
  const std::vector<float> want = forward_logits(lora_model, Format::F32, r.ids, V);
  const TempFile file("merged-q");
  models::write_merged_gguf(file.path, f, lora_model.graph(), lc, [&](const std::string& a) { return adapters.at(a); });
  const io::GgufFile merged = io::GgufFile::open(file.path);
  for (const io::GgufTensor& t : merged.tensors()) EXPECT_FALSE(quant::is_quantized(t.type)) << t.name;
  EXPECT_FALSE(merged.find("quantize.imatrix.file")) << "the quantizer's keys are dropped";

  train::Model m(ctx(), models::llama_graph(models::read_gguf_config(merged), T), Format::F32, 1, 1, false, false);
  train::load_gguf_weights(merged, m);
  expect_close(name + " quantized base merged", forward_logits(m, Format::F32, r.ids, V), want,
               bound_for(Format::F16, forward_sqrt_k(cfg, T), forward_roundings(cfg)));
}

// --merge-type base: the merged file in the base's own types, the adapted
// matrices requantized by ggml's reference quantizers and the others copied
// as they are; llama.cpp ran it (fingerprinted) and gives vkamp's logits on
// it within the 8-bit bound.
TEST_P(GgufMergeGolden, QuantizedBaseMergesIntoItsOwnTypes) {
  const std::string name = GetParam(), file_name = name + (name == "llama" ? "_q4_k_m" : "_q5_k_m");
  const io::GgufFile f = io::GgufFile::open(gguf_fixture(file_name + ".gguf"));
  const models::LlamaConfig cfg = models::read_gguf_config(f);
  const uint32_t T = uint32_t(llamacpp_run(file_name).ids.size()), V = cfg.vocab_size;
  const models::LoraConfig lc = fixture_lora();
  train::Model lora_model(ctx(), models::llama_graph(cfg, T, lc), Format::F32, 1, /*seed=*/1, false, false);
  const std::map<std::string, std::vector<float>> adapters = load_fixture_adapters(lora_model);
  const TempFile file("merged-base");
  models::write_merged_gguf(
      file.path, f, lora_model.graph(), lc, [&](const std::string& a) { return adapters.at(a); },
      models::MergedTypes::Base);
  if (const auto keep = platform::get_env("VKAMP_WRITE_GGUF_MERGED"))
    std::filesystem::copy_file(file.path, platform::path_from_utf8(*keep) / (file_name + "_merged.gguf"),
                               std::filesystem::copy_options::overwrite_existing);
  const uint64_t fingerprint = fnv1a64(file_bytes(file.path));
  const io::GgufFile merged = io::GgufFile::open(file.path);
  EXPECT_EQ(merged.unsigned_integer("general.file_type"), f.unsigned_integer("general.file_type"));
  ASSERT_EQ(merged.tensors().size(), f.tensors().size());
  for (size_t i = 0; i < f.tensors().size(); ++i) {
    const io::GgufTensor &t = merged.tensors()[i], &b = f.tensors()[i];
    EXPECT_EQ(t.name, b.name);
    EXPECT_EQ(t.type, b.type) << t.name;
    const bool adapted = t.name.find("attn_") != std::string::npos && t.name.find("norm") == std::string::npos &&
                         t.name.find(".bias") == std::string::npos;
    const bool ffn = t.name.find("ffn_") != std::string::npos && t.name.find("norm") == std::string::npos;
    const bool same = t.bytes == b.bytes && std::memcmp(t.data, b.data, t.bytes) == 0;
    EXPECT_EQ(same, !(adapted || ffn)) << t.name << (same ? " is the base's though adapted" : " changed");
  }

  ASSERT_TRUE(llamacpp_ran(file_name + "_merged", fingerprint));
  const LlamaCppRun r = llamacpp_run(file_name + "_merged");
  train::Model m(ctx(), models::llama_graph(models::read_gguf_config(merged), T), Format::F32, 1, 1, false, false);
  train::load_gguf_weights(merged, m);
  const std::vector<float> z = forward_logits(m, Format::F32, r.ids, V);
  const double bound = llamacpp_bound(cfg, T, true);
  expect_close(file_name + " merged in its types against llama.cpp", z, r.logits, bound);
  expect_same_greedy(file_name + " merged in its types", z, r, V, bound);
}

INSTANTIATE_TEST_SUITE_P(LlamaCppFile, GgufMergeGolden, ::testing::Values("llama", "qwen2"));

INSTANTIATE_TEST_SUITE_P(LlamaCppFile, GgufGolden,
                         ::testing::Values("llama_f16", "llama_q8_0", "llama_q4_0", "llama_q4_k_m", "qwen2_f16",
                                           "qwen2_q5_k_m"));

}  // namespace
}  // namespace vkamp::test
