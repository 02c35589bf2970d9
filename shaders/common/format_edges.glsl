// The storage format's lower edges, for the underflow accounting
// (amp_check.comp): the smallest normal as fp32 bits, and the exponent of the
// smallest subnormal (a power of two). Compared as bits, so that no driver's
// denormal flushing can move an edge that lies in fp32's own subnormal range
// (bf16's, and fp32's).
#ifndef VKAMP_FORMAT_EDGES_GLSL
#define VKAMP_FORMAT_EDGES_GLSL
#if defined(VKAMP_FP16) || defined(VKAMP_FP16S)
const uint kFormatMinNormalBits = 0x38800000u;  // 2^-14
const int kFormatMinSubnormalExp = -24;
#elif defined(VKAMP_CB16)
const uint kFormatMinNormalBits = 0x30800000u;  // 2^-30 (1-6-9, bias 31)
const int kFormatMinSubnormalExp = -39;
#else  // fp32 and bf16 share fp32's exponent range
const uint kFormatMinNormalBits = 0x00800000u;  // 2^-126
#if defined(VKAMP_BF16)
const int kFormatMinSubnormalExp = -133;
#else
const int kFormatMinSubnormalExp = -149;
#endif
#endif

// The fp32 bits of s * 2^e for a positive normal s, made from s's bits:
// exact while the result is normal, truncated to the subnormal below that
// (the flush edge is a power of two times S, so truncation loses only bits
// of S's mantissa there), inf bits past the range.
uint scaled_by_pow2_bits(float s, int e) {
  uint b = floatBitsToUint(s) & 0x7FFFFFFFu;
  int ex = int(b >> 23) + e;
  if (ex >= 255) return 0x7F800000u;
  if (ex >= 1) return (b & 0x007FFFFFu) | (uint(ex) << 23);
  int shift = 1 - ex;
  return shift >= 24 ? 0u : ((b & 0x007FFFFFu) | 0x00800000u) >> uint(shift);
}
#endif
