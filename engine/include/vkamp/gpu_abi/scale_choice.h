// The loss-scale chooser of --loss-scale suggest and auto, written once for
// both sides like train_state.h (include that first): step_control.comp
// runs it on the GPU for auto, the host (train/scale_suggestion.cpp) for
// suggest and the tests.
//
// Input: exponent-histogram counts of the UNSCALED gradients, all tensors
// added up (bin b holds [2^e, 2^(e+1)), e = kHistMinExp + b; bin 0 also
// everything smaller), the number of elements counted (zeros, inf and NaN
// included), and the 16-bit format's edges as whole exponents:
//   normal_exp: log2 of its smallest normal. At S = 2^k bin e lies wholly
//     below it, scaled, when e + 1 + k <= normal_exp.
//   top_exp: floor(log2 of its largest value). A value of binade e stays
//     finite for sure when e + k < top_exp (the binade top_exp itself ends
//     past the largest value).
// The objective: an element UNDERFLOWS at 2^k when, scaled, it is below the
// format's smallest normal: it flushes to zero or is stored subnormal, with
// fewer significant bits than the format's precision. Both count with
// weight 1 (a subnormal is not half a loss: at fp16's 2^-24 it keeps one
// bit of eleven). The underflow of 2^k is the fraction of all counted
// elements that underflow at it.
// The headroom at 2^k is the doublings left before the largest binade seen
// reaches top_exp: top_exp - 1 - (e_top + k); below 0 it may overflow.
// The smallest headroom over the tensors is that of the largest binade of
// all of them, so the added-up histogram is enough.
//
// The choice: the k in [k_lo, k_hi] with the most headroom (the smallest k,
// as headroom falls with k) whose underflow is at most `target`, and that
// does not overflow. When none meets the target, the k with the least
// underflow that does not overflow (the largest such k, or the smallest k
// giving the same underflow); when even k_lo overflows, k_lo. Counts are
// floats so that a window of many steps cannot wrap a uint; they are summed
// in bin order on both sides, so the GPU and the host decide alike.
#ifndef VKAMP_SCALE_CHOICE_H
#define VKAMP_SCALE_CHOICE_H

#ifdef __cplusplus
#define VKAMP_CHOICE_FUNCTION inline
using std::clamp;  // GLSL's built-ins, for the functions below
using std::max;
using std::min;
#else
#define VKAMP_CHOICE_FUNCTION
#endif

struct ScaleChoice {
  int exp;          // the chosen S = 2^exp
  int headroom;     // doublings left at 2^exp (< 0: may overflow); 1000 with no nonzero gradient
  float underflow;  // elements that flush at 2^exp, of all counted (0..1)
  uint met;         // 1: underflow <= target and no overflow
};

// --loss-scale auto's state on the GPU (one, in its own buffer, saved in the
// checkpoint's "auto_scale" section): the window of histograms since the
// last choice and what the choices did.
struct AutoScaleState {
  uint phase;              // 0: warm-up (dynamic scaling), 1: the chosen static scale
  uint window_start;       // the step the window began at
  uint window_histograms;  // histogram steps added into counts
  uint window_overflows;   // overflowed steps in the window
  int chosen_exp;          // the scale is 2^chosen_exp after the first choice
  uint checks;             // choices made (the warm-up's included)
  uint moves;              // re-checks that changed the scale
  uint met;                // the last choice met the underflow target
  float total;             // elements counted in the window
  float zeros;             // of them, zeros (exact, or flushed at the scale they were taken at)
  float zero_ref;          // the warm-up window's zero fraction: the zeros that are exact
  float last_underflow;    // the last choice's underflow fraction (what the window showed)
  int last_headroom;       // the last choice's headroom
  float counts[kHistLogBins];  // the window's log-bin counts, all tensors added up
};

// Bins b < this underflow whole at 2^k (the rule above): 0..kHistLogBins.
VKAMP_CHOICE_FUNCTION int below_normal_bins(int normal_exp, int k) {
  return clamp(normal_exp - k - kHistMinExp, 0, int(kHistLogBins));
}

// Doublings left at 2^k for the largest binade e_top.
VKAMP_CHOICE_FUNCTION int headroom_at(int top_exp, int e_top, int k) { return top_exp - 1 - e_top - k; }

VKAMP_CHOICE_FUNCTION ScaleChoice choose_scale(float counts[kHistLogBins], float total, int normal_exp, int top_exp,
                                               int k_lo, int k_hi, float target) {
  int top_bin = -1;
  for (int b = 0; b < int(kHistLogBins); ++b)
    if (counts[b] > 0.0) top_bin = b;
  int e_top = kHistMinExp + top_bin;
  // The largest k that cannot overflow (all of them without a gradient).
  int k_safe = top_bin < 0 ? k_hi : min(k_hi, top_exp - 1 - e_top);
  uint met = 1u;
  // The underflow count allowed: the target, or when no safe k meets it,
  // the least there is (at k_safe, as underflow falls with k).
  float allowed = target * total;
  float at_safe = 0.0;
  for (int b = 0; b < below_normal_bins(normal_exp, max(k_safe, k_lo)); ++b) at_safe += counts[b];
  if (k_safe < k_lo || at_safe > allowed) {
    met = 0u;
    allowed = at_safe;
  }
  k_safe = max(k_safe, k_lo);
  ScaleChoice c;
  c.exp = k_safe;
  for (int k = k_lo; k <= k_safe; ++k) {
    float under = 0.0;
    for (int b = 0; b < below_normal_bins(normal_exp, k); ++b) under += counts[b];
    if (under <= allowed) {
      c.exp = k;
      break;
    }
  }
  float under = 0.0;
  for (int b = 0; b < below_normal_bins(normal_exp, c.exp); ++b) under += counts[b];
  c.underflow = total > 0.0 ? under / total : 0.0;
  c.headroom = top_bin < 0 ? 1000 : headroom_at(top_exp, e_top, c.exp);
  c.met = c.headroom >= 0 ? met : 0u;
  return c;
}

#undef VKAMP_CHOICE_FUNCTION
#endif
