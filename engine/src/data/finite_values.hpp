// Features and targets must be finite float32 numbers: a value as a file
// holds it (a CSV cell's double, a float64 element) narrowed to float32,
// and why one that is not finite is refused (LoadOptions::allow_nonfinite).
#pragma once
#include <cfloat>
#include <cmath>
#include <string>

namespace vkamp::data {

// v rounded to float32 as the hardware rounds (to nearest even: from
// FLT_MAX plus half its unit in the last place, an infinity of v's sign),
// without relying on a cast the language leaves undefined out of range.
inline float to_float32(double v) {
  if (std::isfinite(v) && std::fabs(v) >= double(FLT_MAX) + 0x1p103) return v > 0 ? INFINITY : -INFINITY;
  return static_cast<float>(v);
}

// Why `original` (before narrowing) is no float32 number: "is NaN", "is
// infinite", or past float32's range (`overflowed`: the text's number was
// too large even for a double, as strtod says of 1e400).
inline std::string nonfinite_reason(double original, bool overflowed = false) {
  if (std::isnan(original)) return "is NaN";
  if (std::isinf(original) && !overflowed) return "is infinite";
  return "is beyond float32's range (largest magnitude 3.4e+38)";
}

// What every such error ends with.
inline const char* const kNonfiniteAdvice =
    "features and targets must be finite numbers (--allow-nonfinite lets them through)";

}  // namespace vkamp::data
