// What the gradient histogram's bins mean for a 16-bit format. The
// histogram (amp_check.comp) counts the *unscaled* |g| = |stored value| / S
// of each tensor on binade bins [2^e, 2^(e+1)), e = kHistMinExp .. +55
// (bin 0 also holds everything smaller), plus zero, inf and NaN. A gradient
// is stored as g * S, so each limit L of the format sits at log2(L) -
// log2(S) on that axis: the bands move left as the scale grows.
#pragma once
#include <string>

#include "vkamp/float_formats.hpp"
#include "vkamp/train/step_metrics.hpp"

namespace vkamp::ui {

// A format's ranges at a loss scale, as log2 of the unscaled |g|.
struct FormatBands {
  Format format = Format::F16;
  double scale_log2 = 0;
  double flush_at = 0;        // |g| <= 2^flush_at rounds to zero: half the smallest subnormal
  double normal_from = 0;     // the smallest normal
  double overflow_above = 0;  // the largest finite value
};
FormatBands format_bands(Format f, double loss_scale);

// The format whose ranges the histogram shows: the run's 16-bit format, or
// fp16 for an fp32 run (what fp16 would do to these gradients).
Format band_format(Format run_precision);

// Whether the zero bin can hold values that flushed: the run stores
// 16-bit gradients whose underflow lies inside the histogram's range
// (fp16, cb16). The stored zero cannot tell an exact zero (a dead ReLU, an
// input that is always 0) from one that rounded to zero, so the bar is
// "zeros (exact or flushed)"; bf16 and fp32 flush only far below 2^-40.
bool zeros_may_include_flushes(Format run_precision);

// Fractions of one tensor's gradients, of all its elements, from its
// histogram, for the format's ranges (a bin counts when all of it is past
// the limit).
struct HistogramFractions {
  double zero = 0;                // stored as zero (with fp16 this includes what flushed)
  double underflow_unscaled = 0;  // 0 < |g| that would flush to zero at scale 1
  double underflow_scaled = 0;    // 0 < |g| that flush at the histogram's scale
  double overflow_scaled = 0;     // |g * scale| above the format's largest value, inf or NaN
  double total = 0;               // elements counted
};
HistogramFractions fractions(const train::TensorHistogram& h, Format f = Format::F16);

// The bins of several tensors added up, at the first one's step and scale
// (the histograms of one step share them).
train::TensorHistogram combined(const std::vector<train::TensorHistogram>& hs);

// "2^-38" for a whole exponent, "2^-37.5" otherwise.
std::string pow2_label(double exponent);

}  // namespace vkamp::ui
