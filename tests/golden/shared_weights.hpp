// The counter-based generator the real-vocabulary golden fixtures share
// with tests/golden/shared_weights.py, so that a checkpoint of 151,936 x 32
// embeddings needs no committed weights: the fixture holds config.json, each
// tensor's (seed, a, offset) and a checksum of its bits; the test draws the
// same values, checks the checksums, and writes the Hugging Face folder.
//
//   hash(seed, i)  = splitmix64(seed << 32 | i)     (seed < 2^32, element i)
//   uniform        = float32(offset + a (u - 2^23) 2^-23), u = hash >> 40
//                    (24 bits): in [offset - a, offset + a); a is a power of
//                    two, so the product is exact and the sum rounds once
//   token id       = (hash >> 32) * vocab >> 32      (in [0, vocab))
//   file value     = the float32 rounded to the file's dtype (nearest even)
//   checksum       = sum_i hash'(i << 32 | bits_i) mod 2^64, bits_i the
//                    element's bit pattern in that dtype, hash' = splitmix64
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "vkamp/float_formats.hpp"

namespace vkamp::test {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

inline uint64_t shared_hash(uint32_t seed, uint64_t i) { return splitmix64((uint64_t(seed) << 32) | i); }

inline std::vector<float> shared_uniform(uint32_t seed, size_t n, double a, double offset = 0) {
  int e;
  if (std::frexp(a, &e) != 0.5) throw std::invalid_argument("shared_uniform: a must be a power of two");
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t u = int64_t(shared_hash(seed, i) >> 40) - (int64_t(1) << 23);
    v[i] = float(offset + a * (double(u) * 0x1p-23));
  }
  return v;
}

inline std::vector<uint32_t> shared_token_ids(uint32_t seed, size_t n, uint32_t vocab) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint32_t(((shared_hash(seed, i) >> 32) * vocab) >> 32);
  return v;
}

// The checksum of values stored in fmt, as the fixture's hex string.
inline std::string shared_checksum(Format fmt, const std::vector<float>& values) {
  uint64_t sum = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    if (fmt == Format::F32)
      std::memcpy(&bits, &values[i], 4);
    else
      bits = fmt == Format::F16 ? f32_to_fp16(values[i]) : f32_to_bf16(values[i]);
    sum += splitmix64((uint64_t(i) << 32) | bits);
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(sum));
  return hex;
}

}  // namespace vkamp::test
