// Division by a divisor known only at run time, as a multiply-high and two
// shifts (Granlund and Montgomery 1994, figure 4.1): exact for every 32-bit
// n and divisor >= 1. CPU drivers have no vector integer divide (lavapipe
// runs eight scalar divides per 8-lane vector, and those dominated im2col
// there) and GPUs expand '/' into a long sequence. The host computes the
// uvec2 (multiplier, shift1 | shift2 << 1) with ops::detail::fast_divisor.
#ifndef VKAMP_FASTDIV_GLSL
#define VKAMP_FASTDIV_GLSL
uint fast_div(uint n, uvec2 d) {
  uint hi, lo;
  umulExtended(n, d.x, hi, lo);
  return (hi + ((n - hi) >> (d.y & 1u))) >> (d.y >> 1u);
}
#endif
