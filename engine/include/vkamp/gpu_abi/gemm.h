// gemm.comp and gemm_mma.comp (ops::gemm; shaders/common/gemm_common.glsl):
// the product's sizes and where its matrices lie.
#ifndef VKAMP_INTERFACE_GEMM_H
#define VKAMP_INTERFACE_GEMM_H
#include "gemm_epilogue.h"
#include "macros.h"

VKAMP_PUSH(GemmPush)
  uint m, n, k; float alpha;
  uint accumulate;  // bit 0: C += the product; gemm_mma.comp's run-time flags: bit 1, 16-byte loads; bit 2, straight stores
  uint kc;
  uint sa, sb, sc, z0;  // batch strides and the first product of this dispatch (BATCHED)
  uint a_first, b_first, c_first;  // product 0's first element in each binding
  uint lda, ldb, ldc;  // row strides of A, B and C as stored
  uint inner, a_outer, b_outer, c_outer;  // the batch's outer level (BATCHED)
  uint z_mode;  // epilogue: gemm_epilogue.h's kGemmZ*
VKAMP_PUSH_END(GemmPush, p, 84)

// A, B, C, partial, bias, z (A and B are uniform texel buffers in the
// ".texel" build of gemm.comp)
VKAMP_SHADER(GemmShader, gemm, 6, GemmPush)
VKAMP_SHADER(GemmMmaShader, gemm_mma, 6, GemmPush)

#endif
