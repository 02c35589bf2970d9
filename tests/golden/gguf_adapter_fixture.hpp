// The LoRA adapter of the GGUF fixtures (tests/golden/fixtures/gguf/
// <model>_adapter.gguf, and the PEFT folder test_finetune_cli.cpp writes
// for vkamp-generate): rank 4, alpha 8 on every projection, and its values.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "vkamp/graph/graph.hpp"
#include "vkamp/models/llama.hpp"

namespace vkamp::test {

inline models::LoraConfig fixture_lora() {
  models::LoraConfig lc;
  lc.rank = 4;
  lc.alpha = 8;
  return lc;
}

// The adapter fixtures' values, drawn alike on every standard library
// (mt19937's outputs are the standard's; the distributions' are not) from a
// seed made of the adapter's name (FNV-1a): A uniform in +-1/sqrt(in) (as
// PEFT draws it), B uniform in +-0.2 (not PEFT's 0, so that it changes the
// logits).
inline std::vector<float> adapter_fixture_values(const graph::Tensor& t) {
  uint32_t seed = 2166136261u;
  for (char c : t.name) seed = (seed ^ uint8_t(c)) * 16777619u;
  std::mt19937 bits(seed);
  const bool a = t.name.find(".lora_A.") != std::string::npos;
  const double scale = a ? 1 / std::sqrt(double(t.dims[1])) : 0.2;
  std::vector<float> v(size_t(t.dims[0]) * t.dims[1]);
  for (float& x : v) x = float(scale * ((bits() >> 8) * 0x1p-23 - 1));
  return v;
}

}  // namespace vkamp::test
