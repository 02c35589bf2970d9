// What the GGUF golden tests share (test_gguf_golden.cpp): the fixtures
// that llama.cpp's own code made (tests/golden/gguf/make_gguf_fixtures.py),
// the forward's logits, and the bound
// against llama.cpp's CPU backend.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gguf_adapter_fixture.hpp"
#include "golden_step.hpp"
#include "llama_golden.hpp"
#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "vkamp/io/gguf.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/models/gguf_adapter.hpp"
#include "vkamp/models/gguf_model.hpp"
#include "vkamp/train/hf_weights.hpp"
#include "vkamp/train/model.hpp"

namespace vkamp::test {

inline std::string gguf_fixture(const std::string& file) { return std::string(VKAMP_GGUF_FIXTURES) + "/" + file; }

// llama.cpp's run on one file: the 12 prompt ids then its greedy tokens,
// and the logits after each.
struct LlamaCppRun {
  std::vector<uint32_t> ids;
  std::vector<float> logits;  // [ids, vocab]
  uint32_t prompt = 0;
};

inline LlamaCppRun llamacpp_run(const std::string& key) {
  const std::string path = gguf_fixture("llamacpp.safetensors");
  const io::TensorFile f = io::read_safetensors(path);
  LlamaCppRun r;
  r.ids = token_ids(f, key + ".ids", path);
  r.logits = f.floats(key + ".logits", path);
  r.prompt = uint32_t(std::stoul(f.metadata.at("prompt_length")));
  return r;
}

// The forward's logits [ids, vocab] on one sequence.
inline std::vector<float> forward_logits(train::Model& m, Format fmt, const std::vector<uint32_t>& ids, uint32_t vocab) {
  Buffer x(ctx(), ids.size() * 4);
  x.write(ids);
  m.output().fill(kPoison);
  run_once([&](Sequence& seq) { m.record_forward(seq, x, 1, graph::ForwardMode::Eval); });
  return download(m.output(), fmt, ids.size() * vocab);
}

// The bound (normalised mean square error of the logits, as
// llama_golden.hpp's) between vkamp's fp32 forward and llama.cpp's CPU
// backend on the same file. Both read the same weights (the file's floats,
// or its blocks dequantized exactly: ggml's integer dot products scale by
// the same d and m). What differs:
//  - the order of fp32 sums: forward_sqrt_k's term;
//  - llama.cpp rounds each matrix product's input to the weight's "dot
//    type": F16 for F16 weights (u = 2^-11), and its K and V cache are F16.
//    That is at most the 16-bit stages vkamp's own F16 run has
//    (forward_roundings), so llama_golden.hpp's F16 bound holds;
//  - for quantized weights the input is quantized to 8 bits instead (Q8_0
//    blocks of 32 for Q8_0, Q4_0; Q8_K blocks of 256 for the k-quants): an
//    error up to amax/254 per value, amax the block's largest magnitude.
//    Taking amax as up to 4 times a value's RMS (a Gaussian block of 256
//    has a largest value about 3 RMS), each such stage is a rounding of
//    u = 4/254 ~ 2^-6, and a logit's path has 4 per block (q/k/v, o, gate/up
//    and down's inputs) and the lm_head's: added to the F16 stages.
// `adapter_sqrt_k` adds the adapters' products (F32 adapters: no rounding of
// their inputs, only fp32 sums of `in` and r terms per adapted projection).
inline double llamacpp_bound(const models::LlamaConfig& c, uint32_t T, bool quantized, double adapter_sqrt_k = 0) {
  double b = bound_for(Format::F16, forward_sqrt_k(c, T) + adapter_sqrt_k, forward_roundings(c));
  if (quantized) {
    const double u8 = 4.0 / 254, stages = 4.0 * c.num_hidden_layers + 1;
    b += 16 * stages / 3 * u8 * u8;
  }
  return b;
}

// The greedy tokens: where llama.cpp's best logit leads its second by more
// than both can err (8 RMS errors, the RMS error sqrt(bound) x the logits'
// RMS), vkamp's arg-max is llama.cpp's next token. Returns how many
// positions were that clear.
inline int expect_same_greedy(const std::string& label, const std::vector<float>& z, const LlamaCppRun& r,
                              uint32_t vocab, double bound) {
  const double margin = 8 * std::sqrt(bound) * rms(to_double(r.logits));
  int checked = 0;
  for (size_t p = r.prompt - 1; p + 1 < r.ids.size(); ++p) {
    const float* ref = r.logits.data() + p * vocab;
    std::vector<float> sorted(ref, ref + vocab);
    std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<float>());
    if (sorted[0] - sorted[1] <= margin) continue;
    ++checked;
    const float* mine = z.data() + p * vocab;
    EXPECT_EQ(uint32_t(std::max_element(mine, mine + vocab) - mine), r.ids[p + 1]) << label << " position " << p;
  }
  std::printf("[golden] %-52s %d of %zu greedy steps clear of the bound\n", label.c_str(), checked, r.ids.size() - r.prompt);
  return checked;
}

}  // namespace vkamp::test
