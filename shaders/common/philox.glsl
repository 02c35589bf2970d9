// Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2,
// 3", SC11; Random123's philox4x32 with 10 rounds): four 32-bit random words
// from a 128-bit counter and a 64-bit key, with no state, so any element's
// draw is a function of where it is (dropout.comp). The host's copy, for the
// tests, is tests/support/philox.hpp; both pass Random123's known answers.
#ifndef VKAMP_PHILOX_GLSL
#define VKAMP_PHILOX_GLSL

uvec4 philox4x32_10(uvec4 c, uvec2 k) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) k += uvec2(0x9E3779B9u, 0xBB67AE85u);  // the key's Weyl sequence
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, c.x, hi0, lo0);
    umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
    c = uvec4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
  }
  return c;
}

#endif
