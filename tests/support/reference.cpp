#include "reference.hpp"

#include <cmath>
#include <limits>

namespace vkamp::test {
namespace {

struct Layout {
  int mbits, ebits, bias;
};

Layout layout(Format fmt) {
  switch (fmt) {
    case Format::F16: return {10, 5, 15};
    case Format::BF16: return {7, 8, 127};
    case Format::CB16: return {9, 6, 31};
    default: return {23, 8, 127};
  }
}

}  // namespace

double decode_reference(Format fmt, uint16_t bits) {
  Layout l = layout(fmt);
  int sign = bits >> 15;
  int e = (bits >> l.mbits) & ((1 << l.ebits) - 1);
  int m = bits & ((1 << l.mbits) - 1);
  double v;
  if (e == (1 << l.ebits) - 1) v = m ? std::numeric_limits<double>::quiet_NaN() : INFINITY;
  else if (e == 0) v = std::ldexp(double(m), 1 - l.bias - l.mbits);
  else v = std::ldexp(1.0 + std::ldexp(double(m), -l.mbits), e - l.bias);
  return sign ? -v : v;
}

double round_reference(Format fmt, double x) {
  if (fmt == Format::F32) return double(float(x));
  if (std::isnan(x)) return x;
  Layout l = layout(fmt);
  double a = std::abs(x);
  // Positive finite patterns increase with their value: binary search.
  uint32_t max_pattern = (((1u << l.ebits) - 1) << l.mbits) - 1;
  double max_v = decode_reference(fmt, uint16_t(max_pattern));
  double ulp_at_max = max_v - decode_reference(fmt, uint16_t(max_pattern - 1));
  double r;
  if (a >= max_v + ulp_at_max / 2) r = INFINITY;  // the tie goes to inf: max's pattern is odd
  else if (a >= max_v) r = max_v;
  else {
    uint32_t lo = 0, hi = max_pattern;  // v(lo) <= a < v(hi)
    while (hi - lo > 1) {
      uint32_t mid = (lo + hi) / 2;
      (decode_reference(fmt, uint16_t(mid)) <= a ? lo : hi) = mid;
    }
    double vl = decode_reference(fmt, uint16_t(lo)), vh = decode_reference(fmt, uint16_t(hi));
    if (a - vl < vh - a) r = vl;
    else if (a - vl > vh - a) r = vh;
    else r = (lo % 2 == 0) ? vl : vh;
  }
  return std::signbit(x) ? -r : r;
}

namespace {
constexpr double kGeluC = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluA = 0.044715;
// 1 / (1 + e^-x): in double, e^-x overflows to inf only where the result
// is 0 anyway. 1 - sigmoid(x) is sigmoid(-x), with no cancellation.
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
}  // namespace

double activation_reference(ops::Activation act, double x) {
  if (std::isnan(x)) return x;
  switch (act) {
    case ops::Activation::ReLU: return x > 0 ? x : 0.0;
    case ops::Activation::GELU:
      if (std::isinf(x)) return x > 0 ? x : 0.0;  // 0.5 x (1 + tanh(u)) has these limits
      return 0.5 * x * (1 + std::tanh(kGeluC * (x + kGeluA * x * x * x)));
    case ops::Activation::Tanh: return std::tanh(x);
    case ops::Activation::Sigmoid: return sigmoid(x);
    case ops::Activation::SiLU: return x * sigmoid(x);
  }
  return std::nan("");
}

double activation_grad_reference(ops::Activation act, double x) {
  if (std::isnan(x)) return x;
  switch (act) {
    case ops::Activation::ReLU: return x > 0 ? 1.0 : 0.0;
    case ops::Activation::GELU: {
      if (std::isinf(x)) return x > 0 ? 1.0 : 0.0;
      double t = std::tanh(kGeluC * (x + kGeluA * x * x * x));
      return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * kGeluC * (1 + 3 * kGeluA * x * x);
    }
    case ops::Activation::Tanh: {
      double c = std::cosh(x);  // 1 - tanh^2 = 1 / cosh^2, which keeps its tail (0 once c * c overflows)
      return 1 / (c * c);
    }
    case ops::Activation::Sigmoid: return sigmoid(x) * sigmoid(-x);
    case ops::Activation::SiLU: return sigmoid(x) * (1 + x * sigmoid(-x));
  }
  return std::nan("");
}

double cancelling_root(ops::Activation act) {
  if (act == ops::Activation::GELU) return -0.7518;
  if (act == ops::Activation::SiLU) return -1.2785;
  return std::numeric_limits<double>::quiet_NaN();
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

}  // namespace vkamp::test
