// CPU references in double, written from the definitions rather than from
// the engine's code, so a shared mistake cannot hide.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "vkamp/float_formats.hpp"
#include "vkamp/ops/activation.hpp"

namespace vkamp::test {

// Value of a 16-bit pattern, from the format's definition.
double decode_reference(Format fmt, uint16_t bits);
// x rounded to the nearest value of fmt, ties to the even pattern; past the
// largest finite value (by half an ulp or more) it is inf; NaN stays NaN.
double round_reference(Format fmt, double x);

// An activation f(x) and its derivative f'(x), from the definitions (GELU
// in its tanh form). At +-inf, ReLU, tanh, sigmoid and SiLU give what
// their formulas give in IEEE arithmetic, as PyTorch 1.13 does: NaN where
// that is inf * 0 (SiLU(-inf), SiLU' at both ends), the limits elsewhere.
// GELU takes its limits (GELU(-inf) = GELU'(-inf) = 0, where PyTorch gives
// NaN). NaN gives NaN; ReLU's derivative is 0 at its kink. A new activation
// needs its case in both.
double activation_reference(ops::Activation act, double x);
double activation_grad_reference(ops::Activation act, double x);
// Where f' crosses zero as two of its terms cancel (GELU at -0.7518, SiLU at
// -1.2785): fp32 keeps a small absolute error there but no relative one,
// and at n = 1 that element is the whole NMSE. NaN: nowhere.
double cancelling_root(ops::Activation act);

// Inputs rounded to the storage format, as doubles.
std::vector<double> to_double(const std::vector<float>& v);
// The root mean square of v (0 for none).
inline double rms(const std::vector<double>& v) {
  double s = 0;
  for (double e : v) s += e * e;
  return v.empty() ? 0 : std::sqrt(s / double(v.size()));
}

}  // namespace vkamp::test
