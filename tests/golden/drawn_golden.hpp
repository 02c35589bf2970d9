// The golden fixtures whose weights are drawn, not committed
// (make_vocab_fixtures.py and make_qlora_fixtures.py): the folder holds
// config.json and lora_expected.safetensors, whose metadata lists each
// tensor's (name, shape, seed, a, offset, checksum) for the counter-based
// generator of shared_weights.hpp. The test draws them again, checks the
// checksums, and writes model.safetensors into a scratch folder, which
// vkamp's own loader reads. Shared by test_vocab_golden.cpp and
// test_qlora_golden.cpp, with the LoRA step's comparison (bounds:
// llama_golden.hpp).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "golden_step.hpp"
#include "llama_golden.hpp"
#include "shared_weights.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_paths.hpp"

namespace vkamp::test {

struct DrawnFixture {
  std::string src;                  // the committed folder
  std::unique_ptr<ScratchDir> dir;  // the Hugging Face folder drawn from the generator
  std::string hf;                   // its path
  models::LlamaConfig cfg;
  io::TensorFile lora;
  std::vector<uint32_t> ids, targets;
  uint32_t batch = 0, seq = 0;
};

// The manifest's tensors drawn again (name, shape, seed, a, offset,
// checksum, in file order), each checked against Python's checksum, into
// model.safetensors in the file's dtype, beside a copy of config.json.
inline void write_drawn_checkpoint(const DrawnFixture& f) {
  const std::string dtype = f.lora.metadata.at("dtype");
  const Format fmt = dtype == "F16" ? Format::F16 : dtype == "BF16" ? Format::BF16 : Format::F32;
  const io::DType dt = dtype == "F16" ? io::DType::F16 : dtype == "BF16" ? io::DType::BF16 : io::DType::F32;
  io::TensorFile out;
  out.metadata["format"] = "pt";
  for (const auto& e : nlohmann::json::parse(f.lora.metadata.at("weights"))) {
    const std::string name = e[0];
    const std::vector<uint64_t> shape = e[1];
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    const std::vector<float> v = shared_uniform(e[2].get<uint32_t>(), n, e[3].get<double>(), e[4].get<double>());
    EXPECT_EQ(shared_checksum(fmt, v), e[5].get<std::string>()) << name << ": not the bits Python drew";
    out.tensors.push_back({name, dt, shape, pack(fmt, v)});
  }
  io::write_safetensors(f.dir->file("model.safetensors"), out);
  std::filesystem::copy_file(platform::path_from_utf8(f.src + "/config.json"), f.dir->path / "config.json");
}

inline DrawnFixture load_drawn(const std::string& name) {
  DrawnFixture f;
  f.src = VKAMP_TEST_DIR(VKAMP_GOLDEN_DIR) + "/" + name;
  f.lora = io::read_safetensors(f.src + "/lora_expected.safetensors");
  f.dir = std::make_unique<ScratchDir>("vkamp-drawn");
  f.hf = platform::utf8_from_path(f.dir->path);
  write_drawn_checkpoint(f);
  f.cfg = models::read_hf_config(f.hf);
  f.ids = token_ids(f.lora, "input_ids", f.src);
  f.targets = token_ids(f.lora, "targets", f.src);
  f.batch = uint32_t(f.lora.find("input_ids")->shape.at(0));
  f.seq = uint32_t(f.lora.find("input_ids")->shape.at(1));
  return f;
}

// vkamp's logits z [rows, V] at the label's column and the drawn columns
// of each row, as one set, beside the reference's <prefix>label_logits and
// <prefix>sample.logits.
struct SampledLogits {
  std::vector<float> out, ref;
};
inline SampledLogits sampled_logits(const DrawnFixture& f, const std::vector<float>& z, const std::string& prefix) {
  const uint32_t rows = f.batch * f.seq, V = f.cfg.vocab_size;
  const std::vector<uint32_t> columns = token_ids(f.lora, "sample.columns", f.src);
  const std::vector<float> sampled = f.lora.floats(prefix + "sample.logits", f.src),
                           labelled = f.lora.floats(prefix + "label_logits", f.src);
  const size_t per_row = columns.size() / rows;
  SampledLogits s;
  for (uint32_t r = 0; r < rows; ++r) {
    s.out.push_back(z[size_t(r) * V + f.targets[r]]);
    s.ref.push_back(labelled[r]);
    for (size_t j = 0; j < per_row; ++j) {
      s.out.push_back(z[size_t(r) * V + columns[r * per_row + j]]);
      s.ref.push_back(sampled[r * per_row + j]);
    }
  }
  return s;
}

// One forward and backward of `m` (the base and the fixture's init.*
// adapters loaded) on the fixture's batch against the reference: the
// sampled logits, each row's logsumexp, the loss and every adapter's
// gradient, within lora_bounds.
inline void expect_drawn_lora_step(train::Model& m, Format fmt, const DrawnFixture& f, const std::string& tag) {
  const models::LoraConfig lc = lora_of(f.lora);
  const uint32_t rows = f.batch * f.seq, V = f.cfg.vocab_size;
  const double loss = golden_forward_backward(m, fmt, f.ids, f.targets, f.batch, f.seq, V, loss_scale(fmt));
  const LoraBounds b = lora_bounds(fmt, f.cfg, f.seq, rows, lc);

  const std::vector<float> z = download(m.output(), fmt, size_t(rows) * V);
  const SampledLogits s = sampled_logits(f, z, "");
  expect_close(tag + "logits (label + 64 columns a row)", s.out, s.ref, b.logits);
  // A row's logsumexp moves by at most max|dz|, taken as 4 times the
  // logits' RMS error, as loss_tolerance takes it; computed here in double
  // from the whole row, so every one of the V columns counts.
  const double logit_rms = f.lora.floats("logit_rms", f.src).at(0);
  const std::vector<float> lse = f.lora.floats("logsumexp", f.src);
  double worst = 0;
  for (uint32_t r = 0; r < rows; ++r) {
    const float* row = z.data() + size_t(r) * V;
    const double top = *std::max_element(row, row + V);
    double sum = 0;
    for (uint32_t c = 0; c < V; ++c) sum += std::exp(row[c] - top);
    worst = std::max(worst, std::abs(top + std::log(sum) - lse[r]));
  }
  expect_loss(tag + "logsumexp (worst row)", worst, 0.0, 4 * std::sqrt(b.logits) * logit_rms);

  const double ref_loss = f.lora.floats("loss", f.src).at(0);
  expect_loss(tag + "loss", loss, ref_loss, loss_tolerance(b.logits, logit_rms, ref_loss, rows));
  expect_adapter_gradients(tag, m, fmt, f.lora, f.src, b.grads, rows);
}

}  // namespace vkamp::test
