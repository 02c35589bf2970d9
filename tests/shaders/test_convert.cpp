// convert: fp32 -> fp16/bf16/cb16 -> fp32 on the GPU, checked against the
// round-to-nearest-even reference in double, with inf/NaN and out-of-range
// values, and bit-for-bit against the host conversion the engine uses.
#include <cmath>
#include <limits>

#include "support/cases.hpp"
#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "vkamp/ops/convert.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

class Convert : public GpuTestP<FormatSize> {
 protected:
  // fp32 -> fmt on the GPU, then back to fp32 on the GPU.
  std::vector<float> round_trip(Format fmt, const std::vector<float>& in, std::vector<uint16_t>* bits) {
    uint32_t n = uint32_t(in.size());
    Buffer src = upload(ctx(), Format::F32, in);
    Buffer mid = poisoned(ctx(), fmt, n);
    Buffer back = poisoned(ctx(), Format::F32, n);
    Sequence seq(ctx());
    seq.begin();
    ops::convert_from_f32(seq, fmt, src, mid, n);
    ops::convert_to_f32(seq, fmt, mid, back, n);
    seq.end();
    seq.run();
    bits->resize(n);
    mid.read(bits->data(), n * 2);
    return download(back, Format::F32, n);
  }
};

TEST_P(Convert, RoundsToNearestEven) {
  auto [fmt, n] = GetParam();
  // Wide dynamic range: every binade from deep subnormal to past the max.
  double lo_exp = fmt == Format::BF16 ? -130 : (fmt == Format::F16 ? -26 : -42);
  double hi_exp = std::log2(format_max(fmt)) + 1.5;
  std::uniform_real_distribution<double> e(lo_exp, std::min(hi_exp, 127.5));
  std::uniform_int_distribution<int> sign(0, 1);
  std::vector<float> in(n);
  for (float& x : in) x = float((sign(rng()) ? -1 : 1) * std::exp2(e(rng())));
  std::vector<uint16_t> bits;
  auto back = round_trip(fmt, in, &bits);
  for (uint32_t i = 0; i < n; ++i) {
    double want = round_reference(fmt, in[i]);
    ASSERT_EQ(decode_reference(fmt, bits[i]), want) << "input " << in[i] << " at " << i;
    ASSERT_EQ(double(back[i]), want) << "input " << in[i] << " at " << i;
  }
}

TEST_P(Convert, MatchesHostConversionBitForBit) {
  auto [fmt, n] = GetParam();
  std::uniform_int_distribution<uint32_t> any;
  std::vector<float> in(n);
  for (float& x : in) x = std::bit_cast<float>(any(rng()));  // any pattern, NaNs included
  std::vector<uint16_t> bits;
  round_trip(fmt, in, &bits);
  auto host = pack(fmt, in);
  for (uint32_t i = 0; i < n; ++i) {
    uint16_t h = uint16_t(host[2 * i] | (host[2 * i + 1] << 8));
    ASSERT_EQ(bits[i], h) << "input bits 0x" << std::hex << std::bit_cast<uint32_t>(in[i]);
  }
}

TEST_P(Convert, KeepsInfAndNanAndOverflowsToInf) {
  auto [fmt, n] = GetParam();
  const float inf = std::numeric_limits<float>::infinity();
  const float big = float(format_max(fmt) * 1.01);  // past the last rounding boundary
  std::vector<float> specials = {inf, -inf, std::nanf(""), -std::nanf(""), big, -big, 0.0f, -0.0f};
  std::vector<float> in = random_values(n, -4, 4, Format::F32);
  for (uint32_t i = 0; i < n; ++i)
    if (i % 3 == 0) in[i] = specials[(i / 3) % specials.size()];
  std::vector<uint16_t> bits;
  auto back = round_trip(fmt, in, &bits);
  for (uint32_t i = 0; i < n; ++i) {
    double want = round_reference(fmt, in[i]);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(back[i])) << "NaN lost at " << i;
    } else {
      ASSERT_EQ(double(back[i]), want) << "input " << in[i] << " at " << i;
      ASSERT_EQ(std::signbit(back[i]), std::signbit(in[i])) << "sign lost at " << i;
    }
  }
}

// accumulate (a cast's backward adding to a gradient): fp32 -> fmt adds the
// old 16-bit value in fp32 and rounds the sum once; fmt -> fp32 adds in fp32.
TEST_P(Convert, AccumulatesWithOneRounding) {
  auto [fmt, n] = GetParam();
  const std::vector<float> a = random_values(n, -4, 4, Format::F32), old = random_values(n, -4, 4, fmt);
  Buffer src = upload(ctx(), Format::F32, a);
  Buffer dst16 = upload(ctx(), fmt, old);
  Buffer dst32 = upload(ctx(), Format::F32, a);
  Buffer src16 = upload(ctx(), fmt, old);
  Sequence seq(ctx());
  seq.begin();
  ops::convert_from_f32(seq, fmt, src, dst16, n, /*accumulate=*/true);
  ops::convert_to_f32(seq, fmt, src16, dst32, n, /*accumulate=*/true);
  seq.end();
  seq.run();
  const auto sum16 = download(dst16, fmt, n), sum32 = download(dst32, Format::F32, n);
  for (uint32_t i = 0; i < n; ++i) {
    const float exact32 = a[i] + old[i];  // the fp32 sum the shader forms
    ASSERT_EQ(double(sum16[i]), round_reference(fmt, exact32)) << "at " << i;
    ASSERT_EQ(sum32[i], exact32) << "at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Shaders, Convert, sixteen_bit_formats_and_sizes(), format_size_name);
// A real weight's cast: Qwen2.5-0.5B's 896 x 896 attention output projection.
INSTANTIATE_TEST_SUITE_P(RealSize, Convert,
                         ::testing::Combine(::testing::ValuesIn(kSixteenBitFormats), ::testing::Values(896u * 896)),
                         format_size_name);

}  // namespace
}  // namespace vkamp::test
