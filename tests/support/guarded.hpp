// Guarded operands for shader tests, and an error budget for outputs that
// go through several roundings.
//
// Every input carries a NaN tail (a load past the operand's end shows up as
// NaN in the output) and every output is poisoned and followed by a tail of
// sentinels (a store past its end changes one), the convention of every shader test.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {

inline constexpr size_t kGuardTail = 16;
inline constexpr float kGuardSentinel = -3.25f;  // exact in every format

// A device buffer holding v in fmt, then kGuardTail NaNs.
inline Buffer guarded_input(Format fmt, std::vector<float> v) {
  v.insert(v.end(), kGuardTail, std::numeric_limits<float>::quiet_NaN());
  return upload(ctx(), fmt, v);
}

// n poisoned elements (or `initial`, for accumulation), then the sentinels.
inline Buffer guarded_output(Format fmt, size_t n, const std::vector<float>* initial = nullptr) {
  Buffer b = poisoned(ctx(), fmt, n + kGuardTail);
  std::vector<float> tail(kGuardTail, kGuardSentinel);
  auto tail_bytes = pack(fmt, tail);
  b.write(tail_bytes.data(), tail_bytes.size(), n * format_bytes(fmt));
  if (initial) {
    auto bytes = pack(fmt, *initial);
    b.write(bytes.data(), bytes.size());
  }
  return b;
}

// The first n elements of a guarded output, after checking its sentinels.
inline std::vector<float> guarded_result(const Buffer& b, Format fmt, size_t n, const char* what = "output") {
  auto all = download(b, fmt, n + kGuardTail);
  for (size_t i = n; i < all.size(); ++i)
    EXPECT_EQ(all[i], kGuardSentinel) << "the shader wrote " << what << " element " << i << " past its " << n;
  all.resize(n);
  return all;
}

// Records one sequence with `record`, runs it and waits.
template <class Record>
void run_once(Record&& record) {
  Sequence seq(ctx());
  seq.begin();
  record(seq);
  seq.end();
  seq.run();
}

// Unit roundoff of the format: a rounding to nearest errs by at most u |v|.
inline double unit_roundoff(Format fmt) {
  switch (fmt) {
    case Format::F32: return 0x1p-24;
    case Format::F16: return 0x1p-11;
    case Format::BF16: return 0x1p-8;
    case Format::CB16: return 0x1p-10;
  }
  return 1;
}

// Smallest positive normal of the format: below it a rounding's error is
// absolute (half the subnormal spacing, or the value itself where the
// driver flushes subnormals), not relative.
inline double smallest_normal(Format fmt) {
  switch (fmt) {
    case Format::F32: return 0x1p-126;
    case Format::F16: return 0x1p-14;
    case Format::BF16: return 0x1p-126;
    case Format::CB16: return 0x1p-30;
  }
  return 0;
}

// The NMSE bound for an output whose element i errs by at most
//   u_fmt * fmt_mag_i + u_f32 * f32_mag_i,
// u being each format's unit roundoff: fmt_mag_i sums |v| (plus the
// smallest normal) over every value rounded to the format on the way to
// element i (each such rounding errs by at most u_fmt |v|); f32_mag_i is
// sqrt(terms + 1) times the sum of the |terms| an fp32 sum added (the
// random-walk error of fp32 accumulation, as in test_gemm.cpp). So a sum
// that cancels is measured against its summands, not against itself.
// nmse_bound(fmt, 1) carries the margin (16/3 over u^2).
class ErrorBudget {
 public:
  explicit ErrorBudget(Format fmt) : fmt_(fmt) {}
  // One output element: its reference value and its two error magnitudes.
  // Non-finite references are left out, as close_to leaves them out.
  void add(double ref, double fmt_mag, double f32_mag) {
    if (!std::isfinite(ref)) return;
    ref2_ += ref * ref;
    fmt2_ += fmt_mag * fmt_mag;
    f32_2_ += f32_mag * f32_mag;
  }
  // |v| plus the smallest normal: the magnitude one rounding of v to fmt contributes.
  double rounded(double v) const { return std::abs(v) + smallest_normal(fmt_); }
  double bound() const {
    double e = nmse_bound(fmt_, 1) * fmt2_ + nmse_bound(Format::F32, 1) * f32_2_;
    return ref2_ > 0 ? e / ref2_ : e;
  }

 private:
  Format fmt_;
  double ref2_ = 0, fmt2_ = 0, f32_2_ = 0;
};

}  // namespace vkamp::test
