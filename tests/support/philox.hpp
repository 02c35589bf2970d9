// Philox4x32-10 on the host, written from Salmon et al. (SC11) and checked
// against Random123's known answers (test_dropout.cpp): the reference the
// GPU's draws (shaders/common/philox.glsl) are compared with bit for bit.
#pragma once
#include <array>
#include <cstdint>

namespace vkamp::test {

inline std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += 0x9E3779B9u;
      k[1] += 0xBB67AE85u;
    }
    const uint64_t p0 = uint64_t(0xD2511F53u) * c[0], p1 = uint64_t(0xCD9E8D57u) * c[2];
    c = {uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k[1], uint32_t(p0)};
  }
  return c;
}

// Dropout's draw for element i (ops/dropout.hpp): word i % 4 of the block
// at counter (i / 4, step, stream, salt) under key (seed low, seed high).
inline uint32_t dropout_draw(uint64_t seed, uint32_t step, uint32_t stream, uint32_t salt, uint32_t i) {
  return philox4x32_10({i / 4, step, stream, salt}, {uint32_t(seed), uint32_t(seed >> 32)})[i % 4];
}

}  // namespace vkamp::test
