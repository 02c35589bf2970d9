#version 450
#extension GL_GOOGLE_include_directive : require
// The step's decisions, on the GPU so the host never waits: reduce the AMP
// partials, decide skip / apply / retry, update the loss scale (PyTorch's
// _amp_update_scale_, with DeepSpeed's hysteresis), pick the learning rate
// and clip coefficient, and write the step's record to the metrics ring,
// with the underflow accounting: totals in the record, per tensor in a ring
// beside it (amp_check.comp counts, here published and cleared).
// One workgroup; thread 0 runs the scalar logic.
#include "nonfinite.glsl"
#include "vkamp/gpu_abi/train_state.h"
#include "vkamp/gpu_abi/scale_choice.h"
#include "vkamp/gpu_abi/step_codes.h"

layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer State { TrainState st; };
layout(std430, binding = 1) readonly buffer Params { TrainParams prm; };
layout(std430, binding = 2) readonly buffer PartialSq { vec2 partial_sq[]; };  // (s, k): s * 4^k
layout(std430, binding = 3) readonly buffer PartialBad { uint partial_bad[]; };
layout(std430, binding = 4) readonly buffer Loss { float loss[]; };  // one per micro-batch
layout(std430, binding = 5) buffer Hist { uint hist[]; };
layout(std430, binding = 6) buffer HistRing { uint hist_ring[]; };
layout(std430, binding = 7) buffer Ring { StepRecord ring[]; };
// Adam's bias corrections (1 - beta1^t, 1 - beta2^t) for t = 1.., computed
// in double on the host: 1 - pow(beta, t) in fp32 cancels (at t = 1, two
// ulps of pow's error make 1 - 0.999^t 1e-4 off), and the Vulkan spec
// allows pow far more error than that. Past the table both are 1.0 in fp32.
layout(std430, binding = 8) readonly buffer BiasCorrection { vec2 bias_correction[]; };
// The learning rate of applied update k (k from 0), computed in double on
// the host (step_params.cpp) for the same reason: drivers round cos and pow
// differently, and every driver must give the same schedule. Past the table
// (a finished run's replays) the last entry holds.
layout(std430, binding = 9) readonly buffer LrTable { float lr_table[]; };
layout(std430, binding = 10) buffer Stats { TensorStats stats[]; };  // per tensor, this step's
layout(std430, binding = 11) writeonly buffer StatsRing { TensorStats stats_ring[]; };  // ring_size x tensors
// --loss-scale auto: the histogram window and the choices (scale_choice.h).
layout(std430, binding = 12) buffer AutoScale { AutoScaleState aut; };

shared float sq[256];
shared int sk[256];
shared uint bad[256];
shared int hist_slot;
shared uint record_slot;
shared uvec4 under[256];  // zeros, subnormal, lost_unscaled, max_abs_bits (max)
shared uint hist_column[kHistBins];  // auto: this step's histogram, all tensors added up

// --loss-scale auto, after this step's decision (thread 0): add its
// histogram and overflow to the window; when the warm-up ends, a re-check
// is due, or the window has seen more overflows than it tolerates, choose
// 2^k from the window (scale_choice.h) and start a new one. A single
// overflow moves nothing; too many lower the scale by a doubling at least.
//
// At a static scale the gradients that flush are stored as zero, so a
// re-check's histograms cannot show them: their estimate is the growth of
// the zero fraction over the warm-up's (whose scale flushed no more), and
// the chooser gets what is left of the target. When that growth alone is
// past the target, the scale moves up a doubling, if the headroom allows.
void auto_scale_step(bool found_inf, bool with_histogram) {
  if (with_histogram) {
    float sum = 0.0;
    for (uint b = 0u; b < kHistBins; ++b) {
      if (b < kHistLogBins) aut.counts[b] += float(hist_column[b]);
      sum += float(hist_column[b]);
    }
    aut.total += sum;
    aut.zeros += float(hist_column[kHistZero]);
    aut.window_histograms += 1u;
  }
  if (found_inf) aut.window_overflows += 1u;
  uint seen = st.step + 1u - aut.window_start;  // steps in the window, this one included
  bool storm = aut.window_overflows > prm.auto_overflow_tolerance;
  bool warmup = aut.phase == 0u;
  bool due = warmup ? st.step + 1u >= prm.auto_warmup : (seen >= prm.auto_recheck || storm);
  if (!due || aut.window_histograms == 0u) return;
  float zero_frac = aut.total > 0.0 ? aut.zeros / aut.total : 0.0;
  float flushed = warmup ? 0.0 : max(zero_frac - aut.zero_ref, 0.0);
  float target = prm.underflow_target - flushed;
  ScaleChoice c = choose_scale(aut.counts, aut.total, prm.format_normal_exp, prm.format_top_exp, prm.scale_exp_lo,
                               prm.scale_exp_hi, max(target, 0.0));
  int k = c.exp;
  if (!warmup && target < 0.0) {
    // Up a doubling, when the largest gradient seen still fits.
    int up = aut.chosen_exp + 1;
    if (up <= prm.scale_exp_hi && c.headroom - (up - c.exp) >= 0) k = up;
    else k = max(k, aut.chosen_exp);
  }
  // Overflows the histograms did not foresee (their inf and NaN bins give
  // no magnitude): below the scale that overflowed.
  if (storm && !warmup) k = min(k, aut.chosen_exp - 1);
  k = max(k, prm.scale_exp_lo);
  if (warmup) aut.zero_ref = zero_frac;
  if (!warmup && k != aut.chosen_exp) aut.moves += 1u;
  aut.phase = 1u;
  aut.chosen_exp = k;
  aut.checks += 1u;
  aut.met = c.met;
  aut.last_underflow = c.underflow + flushed;
  aut.last_headroom = c.headroom - (k - c.exp);
  st.scale = pow2i(k);
  st.growth_tracker = 0u;
  st.hysteresis_left = prm.hysteresis;
  aut.window_start = st.step + 1u;
  aut.window_histograms = 0u;
  aut.window_overflows = 0u;
  aut.total = 0.0;
  aut.zeros = 0.0;
  for (uint b = 0u; b < kHistLogBins; ++b) aut.counts[b] = 0.0;
}

void main() {
  uint lid = gl_LocalInvocationID.x;
  // The partials are scaled sums (amp_check.comp): s * 4^k. First the
  // largest k, then every s rescaled to it by an exact power of two.
  int k = -126;
  for (uint i = lid; i < prm.partials; i += 256u) k = max(k, int(partial_sq[i].y));
  sk[lid] = k;
  barrier();
  for (uint w = 128u; w > 0u; w >>= 1) {
    if (lid < w) sk[lid] = max(sk[lid], sk[lid + w]);
    barrier();
  }
  int kmax = sk[0];
  uvec4 u = uvec4(0u);
  for (uint t = lid; t < prm.tensors; t += 256u)
    u = uvec4(u.xyz + uvec3(stats[t].zeros, stats[t].subnormal, stats[t].lost_unscaled), max(u.w, stats[t].max_abs_bits));
  under[lid] = u;
  float s = 0.0;
  uint nb = 0u;
  for (uint i = lid; i < prm.partials; i += 256u) {
    s += partial_sq[i].x * pow2i(2 * (int(partial_sq[i].y) - kmax));
    nb += partial_bad[i];
  }
  sq[lid] = s;
  bad[lid] = nb;
  barrier();
  for (uint w = 128u; w > 0u; w >>= 1) {
    if (lid < w) {
      sq[lid] += sq[lid + w];
      bad[lid] += bad[lid + w];
      under[lid] = uvec4(under[lid].xyz + under[lid + w].xyz, max(under[lid].w, under[lid + w].w));
    }
    barrier();
  }

  // --loss-scale auto: add this step's histograms up over the tensors, one
  // bin per thread, for the window (thread 0 below). Every thread reads the
  // state before thread 0 changes it.
  bool auto_mode = prm.scale_mode == kScaleAuto;
  bool stopped_now = st.nonfinite_master != 0u || st.done != 0u || st.failed != 0u || st.applied >= prm.budget;
  bool auto_histogram = auto_mode && !stopped_now && prm.histogram_interval != 0u &&
                        st.step % prm.histogram_interval == 0u;
  if (auto_histogram && lid < kHistBins) {
    uint c = 0u;
    for (uint t = 0u; t < prm.tensors; ++t) c += hist[t * kHistBins + lid];
    hist_column[lid] = c;
  }
  barrier();

  if (lid == 0u) {
    float scale = st.scale;
    // Only a non-finite gradient is an overflow; the scaled sum of squares
    // of finite values is finite by construction.
    bool found_inf = bad[0] != 0u;
    // sqrt(s) * 2^kmax / S, unscaled before the 2^kmax so that only a norm
    // beyond fp32 itself can overflow.
    float grad_norm = sqrt(sq[0]) / scale * pow2i(kmax);
    float mean_loss = 0.0;
    for (uint m = 0u; m < prm.micro_batches; ++m) mean_loss += loss[m];
    mean_loss /= float(prm.micro_batches);

    // The last applied update left a non-finite fp32 master weight
    // (optimizer.comp): stop here, before another update.
    if (st.nonfinite_master != 0u) st.failed = 1u;
    bool stopped = st.done != 0u || st.failed != 0u || st.applied >= prm.budget;
    bool apply = false, consume = false, retry = false;
    uint retries_now = st.retries;
    if (!stopped) {
      if (!found_inf || prm.policy == kPolicyApply) {
        apply = true;
        consume = true;
      } else if (prm.policy == kPolicyRetry && st.retries < prm.max_retries) {
        st.retries += 1u;  // same batch again, at the lower scale
        retry = true;
      } else {
        consume = true;
        st.skipped_total += 1u;
      }
    }
    st.apply = apply ? 1u : 0u;
    st.inv_scale = 1.0 / scale;
    st.lr = lr_table[min(st.applied, prm.lr_table_len - 1u)];
    float clip = 1.0;
    if (prm.max_norm > 0.0 && grad_norm > prm.max_norm) clip = prm.max_norm / (grad_norm + 1e-6);
    st.clip_coef = clip;
    uint t = st.applied + 1u;  // Adam's step count, which only applied steps advance
    vec2 bc = t <= prm.bias_table_len ? bias_correction[t - 1u] : vec2(1.0);
    st.bias_correction1 = bc.x;
    st.bias_correction2 = bc.y;

    if (!stopped) {
      if (found_inf) st.overflow_total += 1u;
      // Fail-fast: overflowing while already at the floor.
      if (found_inf && (prm.scale_mode == kScaleDynamic || auto_mode) && scale <= prm.min_loss_scale)
        st.overflows_at_min += 1u;
      else if (!found_inf) st.overflows_at_min = 0u;
      if (prm.fail_after_overflows != 0u && st.overflows_at_min >= prm.fail_after_overflows) st.failed = 1u;

      // auto: dynamic scaling through the warm-up, then a static 2^k.
      bool dynamic_now = prm.scale_mode == kScaleDynamic || (auto_mode && aut.phase == 0u);
      if (dynamic_now) {
        if (found_inf) {
          // A retry recomputes at a lower scale whatever the hysteresis:
          // at the same scale it would overflow the same way.
          if (retry || st.hysteresis_left <= 1u) st.scale = max(scale * prm.backoff_factor, prm.min_loss_scale);
          else st.hysteresis_left -= 1u;
          st.growth_tracker = 0u;
        } else {
          st.growth_tracker += 1u;
          if (prm.consecutive_hysteresis != 0u) st.hysteresis_left = prm.hysteresis;
          if (st.growth_tracker >= prm.steps_per_increase) {
            float grown = scale * prm.growth_factor;
            if (!is_nonfinite(grown)) st.scale = min(grown, prm.max_loss_scale);
            st.growth_tracker = 0u;
            st.hysteresis_left = prm.hysteresis;
          }
        }
      }
      if (auto_mode) auto_scale_step(found_inf, auto_histogram);
      if (apply) st.applied += 1u;
      if (consume) {
        st.cursor += prm.micro_batches;
        st.retries = 0u;
      }
      if (st.applied >= prm.budget) st.done = 1u;
    }
    st.grad_multiplier = grad_multiplier(st.scale, prm.micro_batches);

    bool histogram = !stopped && prm.histogram_interval != 0u && st.step % prm.histogram_interval == 0u;
    hist_slot = histogram ? int((st.step / prm.histogram_interval) % prm.hist_ring_size) : -1;

    uint slot = st.replay % prm.ring_size;
    ring[slot].step = st.step;
    ring[slot].loss = mean_loss;
    ring[slot].loss_scale = scale;
    ring[slot].skipped = (!stopped && !apply) ? 1u : 0u;
    ring[slot].overflow = found_inf ? 1u : 0u;
    ring[slot].grad_norm = grad_norm;
    ring[slot].lr = st.lr;
    ring[slot].retries = retries_now;
    ring[slot].applied = st.applied;
    ring[slot].cursor = st.cursor;
    ring[slot].done = st.done;
    ring[slot].failed = st.failed;
    ring[slot].hist_slot = hist_slot;
    ring[slot].idle = stopped ? 1u : 0u;
    ring[slot].replay = st.replay;
    ring[slot].nonfinite_master = st.nonfinite_master;
    ring[slot].zeros = under[0].x;
    ring[slot].subnormal = under[0].y;
    ring[slot].lost_unscaled = under[0].z;
    ring[slot].max_abs_bits = under[0].w;
    record_slot = slot;
    st.replay += 1u;
    if (!stopped) st.step += 1u;
  }
  barrier();
  // Publish this step's histograms and clear the accumulator for the next.
  uint n = prm.tensors * kHistBins;
  for (uint i = lid; i < n; i += 256u) {
    if (hist_slot >= 0) hist_ring[uint(hist_slot) * n + i] = hist[i];
    hist[i] = 0u;
  }
  // Every step's tensor statistics, in the record's slot.
  for (uint t = lid; t < prm.tensors; t += 256u) {
    stats_ring[record_slot * prm.tensors + t] = stats[t];
    stats[t] = TensorStats(0u, 0u, 0u, 0u, 0u);
  }
}
