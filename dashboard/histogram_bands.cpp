#include "histogram_bands.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "vkamp/train/gpu_state.hpp"

namespace vkamp::ui {
namespace {

using train::kHistBins;
using train::kHistInf;
using train::kHistLogBins;
using train::kHistMinExp;
using train::kHistNan;
using train::kHistZero;

double scale_log2(double loss_scale) { return std::log2(std::max(loss_scale, 1e-38)); }

}  // namespace

FormatBands format_bands(Format f, double loss_scale) {
  const double ls = scale_log2(loss_scale);
  FormatBands b;
  b.format = f;
  b.scale_log2 = ls;
  // Round to nearest even: below half the smallest subnormal, and at it
  // exactly, a value rounds to zero; above it, up to the subnormal.
  b.flush_at = std::log2(format_min_subnormal(f)) - 1 - ls;
  b.normal_from = std::log2(format_min_normal(f)) - ls;
  b.overflow_above = std::log2(format_max(f)) - ls;
  return b;
}

Format band_format(Format run_precision) { return run_precision == Format::F32 ? Format::F16 : run_precision; }

bool zeros_may_include_flushes(Format run_precision) {
  return run_precision != Format::F32 && format_bands(run_precision, 1).flush_at >= kHistMinExp;
}

HistogramFractions fractions(const train::TensorHistogram& h, Format f) {
  HistogramFractions r;
  for (uint32_t c : h.bins) r.total += c;
  if (r.total == 0) return r;
  const FormatBands unscaled = format_bands(f, 1), scaled = format_bands(f, h.loss_scale);
  double under_unscaled = 0, under_scaled = 0, over = h.bins[kHistInf] + h.bins[kHistNan];
  for (int b = 0; b < int(kHistLogBins); ++b) {
    // Bin b holds [2^e, 2^(e+1)) with e = kHistMinExp + b.
    const double e = kHistMinExp + b;
    if (e + 1 <= unscaled.flush_at) under_unscaled += h.bins[b];
    if (e + 1 <= scaled.flush_at) under_scaled += h.bins[b];
    if (e >= scaled.overflow_above) over += h.bins[b];
  }
  r.zero = h.bins[kHistZero] / r.total;
  r.underflow_unscaled = under_unscaled / r.total;
  r.underflow_scaled = under_scaled / r.total;
  r.overflow_scaled = over / r.total;
  return r;
}

train::TensorHistogram combined(const std::vector<train::TensorHistogram>& hs) {
  train::TensorHistogram all;
  all.tensor = "all tensors";
  if (hs.empty()) return all;
  all.step = hs.front().step;
  all.loss_scale = hs.front().loss_scale;
  for (const auto& h : hs)
    for (int b = 0; b < int(kHistBins); ++b) all.bins[b] += h.bins[b];
  return all;
}

std::string pow2_label(double exponent) {
  char buf[32];
  if (exponent == std::floor(exponent)) std::snprintf(buf, sizeof buf, "2^%d", int(exponent));
  else std::snprintf(buf, sizeof buf, "2^%.1f", exponent);
  return buf;
}

}  // namespace vkamp::ui
