#version 450
#extension GL_GOOGLE_include_directive : require
// The fused optimizer pass over every parameter: predicated on the step's
// decision (a skipped step writes nothing), unscale by 1/S, clip (by value,
// then by the global-norm coefficient), update the fp32 master weight and
// its optimizer state, and write the 16-bit working copy in the same pass.
// OPTIMIZER: kOptimizerSgd (momentum if > 0), kOptimizerAdam or kOptimizerAdamW. ACCUMULATED = 1 reads
// the fp32 sum of the micro-batch gradients instead of the 16-bit gradient.
// A master weight that comes out non-finite (the apply policy applied an
// inf, or the update itself overflowed) is recorded for step_control,
// which stops the run at the next step.
#include "types.glsl"
#include "nonfinite.glsl"
#include "vkamp/gpu_abi/train_state.h"
#include "vkamp/gpu_abi/layer_scale_state.h"
#include "vkamp/gpu_abi/step_codes.h"
#include "elementwise.glsl"

layout(constant_id = 0) const uint OPTIMIZER = kOptimizerSgd;
layout(constant_id = 1) const uint ACCUMULATED = 0;
layout(std430, binding = 0) buffer State { TrainState st; };
layout(std430, binding = 1) readonly buffer Params { TrainParams prm; };
layout(std430, binding = 2) readonly buffer Grads { sfp g[]; };
layout(std430, binding = 3) buffer Master { float w[]; };
layout(std430, binding = 4) buffer M1 { float m1[]; };
layout(std430, binding = 5) buffer M2 { float m2[]; };
layout(std430, binding = 6) writeonly buffer Working { sfp wk[]; };
layout(std430, binding = 7) readonly buffer GradSum { float gsum[]; };  // ACCUMULATED only
// Per-layer loss scaling: the run's gradients carry layer[group].inv_scale's
// scale (layer_scale.comp), not the global one.
layout(std430, binding = 8) readonly buffer Layers { LayerScale layer[]; };
// Elements [first, first + n); decay = 0 turns weight decay off there (a
// run of biases and norm gains under --no-decay-vectors); group: the scale
// group of a per-layer scaled run, kNoScaleGroup otherwise.
#include "vkamp/gpu_abi/optimizer.h"

void main() {
  if (st.apply == 0u) return;
  float lr = st.lr, wd = p.decay != 0u ? prm.weight_decay : 0.0;
  float inv_scale = p.group == kNoScaleGroup ? st.inv_scale : layer[p.group].inv_scale;
  FOR_EACH_ELEMENT(j, p.n) {
    uint i = p.first + j;
    float grad = (ACCUMULATED != 0u ? gsum[i] : sfp2f(g[i])) * inv_scale;
    // clamp() may return a bound for NaN: a NaN gradient (policy apply)
    // must reach the master weight, where the check below sees it.
    if (prm.max_value > 0.0 && !is_nan_bits(grad)) grad = clamp(grad, -prm.max_value, prm.max_value);
    grad *= st.clip_coef;
    float x = w[i];
    if (OPTIMIZER == kOptimizerSgd) {
      grad += wd * x;
      if (prm.momentum > 0.0) {
        float v = prm.momentum * m1[i] + grad;
        m1[i] = v;
        grad = v;
      }
      x -= lr * grad;
    } else {
      if (OPTIMIZER == kOptimizerAdam) grad += wd * x;
      else x -= lr * wd * x;
      float a = prm.beta1 * m1[i] + (1.0 - prm.beta1) * grad;
      float b = prm.beta2 * m2[i] + (1.0 - prm.beta2) * grad * grad;
      m1[i] = a;
      m2[i] = b;
      x -= lr * (a / st.bias_correction1) / (sqrt(b / st.bias_correction2) + prm.eps);
    }
    // ~i, so the largest value marks the lowest index (the first tensor).
    if (is_nonfinite(x)) atomicMax(st.nonfinite_master, ~i);
    w[i] = x;
    wk[i] = f2sfp(x);
  }
}
