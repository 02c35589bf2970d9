// amp_check.comp and step_control.comp run directly, once, over gradients
// given as bit patterns (one per element, in the format's storage): the
// step's record and the per-tensor underflow accounting, without a model.
#pragma once
#include <cstring>
#include <vector>

#include "vkamp/gpu_abi/amp_check.h"
#include "vkamp/gpu_abi/step_control.h"
#include "support/gpu_test.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"
#include "vkamp/train/gpu_state.hpp"

namespace vkamp::test {

struct AmpPassResult {
  train::StepRecord record{};
  std::vector<train::TensorStats> stats;  // one per tensor range
};

// `ranges`: the tensors' [begin, end), ascending, gaps allowed (padding);
// empty means one tensor over every element. `partials`: amp_check's
// workgroups, as the trainer would pick for the size.
inline AmpPassResult run_amp_pass(Format fmt, const std::vector<uint32_t>& bits, float scale,
                                  std::vector<uint32_t> ranges = {}, uint32_t partials = 3) {
  Context& c = ctx();
  const size_t eb = format_bytes(fmt);
  const uint32_t n = uint32_t(bits.size()), ring_size = 4;
  if (ranges.empty()) ranges = {0, n};
  const uint32_t tensors = uint32_t(ranges.size() / 2);
  std::vector<uint8_t> raw(n * eb);
  for (uint32_t i = 0; i < n; ++i) std::memcpy(&raw[i * eb], &bits[i], eb);  // little-endian low half
  Buffer grads(c, raw.size());
  grads.write(raw.data(), raw.size());

  train::TrainState st{};
  st.scale = scale;
  st.grad_multiplier = scale;
  st.hysteresis_left = 1;
  Buffer state(c, sizeof st);
  state.write(&st, sizeof st);
  train::TrainParams p{};
  p.scale_mode = 2;
  p.growth_factor = 2;
  p.backoff_factor = 0.5f;
  p.steps_per_increase = 1000;
  p.min_loss_scale = 1;
  p.max_loss_scale = 3.4e38f;
  p.hysteresis = 1;
  p.budget = 10;
  p.micro_batches = 1;
  p.ring_size = ring_size;
  p.hist_ring_size = 1;
  p.tensors = tensors;
  p.lr_table_len = 1;
  p.partials = partials;
  p.beta1 = 0.9f;
  p.beta2 = 0.999f;
  Buffer params(c, sizeof p);
  params.write(&p, sizeof p);
  Buffer range_buf(c, ranges.size() * 4);
  range_buf.write(ranges);
  Buffer partial_sq(c, partials * 8), partial_bad(c, partials * 4), grad_sum(c, 4);
  Buffer hist(c, tensors * train::kHistBins * 4), hist_ring(c, tensors * train::kHistBins * 4), loss(c, 4);
  hist.fill(0);
  loss.fill(0);
  Buffer ring(c, ring_size * sizeof(train::StepRecord), Memory::Host);
  ring.fill(0xFFFFFFFFu);
  Buffer stats(c, tensors * sizeof(train::TensorStats));
  stats.fill(0);
  Buffer stats_ring(c, ring_size * tensors * sizeof(train::TensorStats), Memory::Host);
  stats_ring.fill(0xFFFFFFFFu);
  Buffer bias_correction(c, 8);  // p.bias_table_len = 0: not read
  bias_correction.fill(0);
  Buffer lr_table(c, 4);  // p.lr_table_len = 1
  lr_table.fill(0);
  Buffer auto_scale(c, sizeof(train::AutoScaleState));  // scale_mode dynamic: not read
  auto_scale.fill(0);

  auto amp = c.kernel<shader::AmpCheckShader>(fmt, {0, 0});
  auto ctl = c.kernel<shader::StepControlShader>();
  Sequence seq(c);
  seq.begin();
  // The last two bindings are read by per-layer runs only (PER_LAYER = 0).
  seq.dispatch(amp, {state, params, grads, range_buf, partial_sq, partial_bad, hist, grad_sum, stats, state, state}, {n},
               {partials});
  seq.dispatch(ctl, {state, params, partial_sq, partial_bad, loss, hist, hist_ring, ring, bias_correction, lr_table,
                     stats, stats_ring, auto_scale},
               {1});
  seq.end();
  seq.run();
  AmpPassResult out;
  ring.read(&out.record, sizeof out.record);
  out.stats.resize(tensors);
  stats_ring.read(out.stats.data(), tensors * sizeof(train::TensorStats));
  return out;
}

}  // namespace vkamp::test
