#include "numerics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace vkamp::test {

std::mt19937_64& rng() {
  static std::mt19937_64 gen;
  static const ::testing::TestInfo* seeded_for = nullptr;
  const ::testing::TestInfo* now = ::testing::UnitTest::GetInstance()->current_test_info();
  if (now != seeded_for || !now) {
    seeded_for = now;
    uint64_t seed;
    if (const char* s = std::getenv("VKAMP_TEST_SEED")) seed = std::strtoull(s, nullptr, 10);
    else seed = (uint64_t(std::random_device{}()) << 32) | std::random_device{}();
    gen.seed(seed);
    ::testing::Test::RecordProperty("seed", std::to_string(seed));
    std::printf("[ seed     ] VKAMP_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  }
  return gen;
}

std::vector<float> random_values(size_t n, float lo, float hi, Format fmt) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = round_to(fmt, dist(rng()));
  return v;
}

double nmse_bound(Format fmt, double ulps) {
  // Rounding to a p-bit significand has relative error up to 2^-p, so the
  // NMSE of one rounding is about 2^-2p / 3; allow a margin of 16x.
  double eps;
  switch (fmt) {
    case Format::F32: eps = std::ldexp(1.0, -24); break;
    case Format::F16: eps = std::ldexp(1.0, -11); break;
    case Format::BF16: eps = std::ldexp(1.0, -8); break;
    case Format::CB16: eps = std::ldexp(1.0, -10); break;
    default: eps = 1;
  }
  return 16.0 * ulps * ulps * eps * eps / 3.0 + 1e-30;
}

::testing::AssertionResult close_to(std::span<const float> out, std::span<const double> ref, double bound,
                                    double abs_error) {
  if (out.size() != ref.size())
    return ::testing::AssertionFailure() << "size " << out.size() << " vs reference " << ref.size();
  double err = 0, norm = 0, floor = 0;
  size_t worst = 0;
  double worst_abs = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    double o = out[i], r = ref[i];
    if (std::isnan(r) || std::isnan(o)) {
      if (std::isnan(r) != std::isnan(o))
        return ::testing::AssertionFailure() << "element " << i << ": got " << o << ", reference " << r;
      continue;
    }
    if (std::isinf(r) || std::isinf(o)) {
      if (o != r)
        return ::testing::AssertionFailure() << "element " << i << ": got " << o << ", reference " << r;
      continue;
    }
    err += (o - r) * (o - r);
    norm += r * r;
    floor += abs_error * abs_error;
    if (std::abs(o - r) > worst_abs) {
      worst_abs = std::abs(o - r);
      worst = i;
    }
  }
  double nmse = norm > 0 ? std::max(err - floor, 0.0) / norm : std::max(err - floor, 0.0);
  if (!(nmse <= bound))
    return ::testing::AssertionFailure() << "NMSE " << nmse << " > bound " << bound << "; worst element "
                                         << worst << ": got " << out[worst] << ", reference " << ref[worst];
  return ::testing::AssertionSuccess() << "NMSE " << nmse;
}

Buffer upload(Context& ctx, Format fmt, std::span<const float> values) {
  Buffer b(ctx, values.size() * format_bytes(fmt));
  auto bytes = pack(fmt, values);
  b.write(bytes.data(), bytes.size());
  return b;
}

Buffer poisoned(Context& ctx, Format fmt, size_t n) {
  Buffer b(ctx, n * format_bytes(fmt));
  b.fill(kPoison);
  return b;
}

std::vector<float> download(const Buffer& b, Format fmt, size_t n) {
  std::vector<uint8_t> bytes(n * format_bytes(fmt));
  b.read(bytes.data(), bytes.size());
  return unpack(fmt, bytes);
}

}  // namespace vkamp::test
