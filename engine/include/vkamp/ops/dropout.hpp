// Inverted dropout (PyTorch's nn.Dropout, which nanoGPT uses): each element
// is kept with probability 1 - p and scaled by 1/(1 - p), or dropped to
// x * 0 (a signed zero; NaN for an inf or NaN x, as PyTorch's mask product
// gives). The keeps are counter-based random numbers (Philox4x32-10,
// shaders/common/philox.glsl) drawn from the run's seed, the step number
// read on the GPU, a stream and a salt, and the element's index: nothing is
// stored, the backward draws the same keeps again, and a resumed run draws
// what the uninterrupted one would have.
#pragma once
#include <cstdint>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

struct DropoutKey {
  uint64_t seed = 0;
  const Buffer* counter = nullptr;  // the step number is the uint at word counter_word
  uint32_t counter_word = 0;
  uint32_t stream = 0;  // distinct draws per micro-batch and rank
  uint32_t salt = 0;    // distinct draws per node
};

// An element is kept when its 32-bit draw is >= this: round(p 2^32), so it
// is kept with probability 1 - p to within 2^-33. p in [0, 1).
uint32_t dropout_threshold(double p);
// 1 / (1 - p), rounded once to fp32.
float dropout_scale(double p);

// y = dropout(x) over n elements (fmt); also the backward, dx = dropout(dy)
// under the same key. x and y may be the same buffer.
void dropout(Sequence& seq, Format fmt, BufferView x, BufferView y, uint32_t n, double p, const DropoutKey& key);

}  // namespace vkamp::ops
