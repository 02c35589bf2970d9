// The next token from a model's logits, as the language-model tools draw
// it: greedy at temperature 0 (the first of the largest), else from
// softmax(z / T) among the top_k likeliest (0: all) and, within them, the
// fewest likeliest whose probability reaches top_p (1: all; Hugging Face's
// TopP warper), with std::discrete_distribution over `gen`.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

namespace vkamp::app {

struct Sampling {
  double temperature = 0.8;
  uint32_t top_k = 0;
  double top_p = 1;
};

// Throws vkamp::Error when a logit is not finite (no text to sample).
uint32_t sample_next(const std::vector<float>& logits, const Sampling& s, std::mt19937_64& gen);

}  // namespace vkamp::app
