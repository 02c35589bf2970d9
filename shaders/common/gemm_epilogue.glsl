// The activation step of the GEMM's epilogue, shared by gemm_common.glsl's
// store_c and gemm_reduce.comp. The includer declares the specialization
// constant ACT (a code of activation_fn.glsl; ACT_NONE: the plain store),
// the z binding `zs` (dense m x n, in the storage format) and the push
// constants `p` with z_mode (vkamp/gpu_abi/gemm_epilogue.h), then includes
// this after activation_fn.glsl.
#ifndef VKAMP_GEMM_EPILOGUE_GLSL
#define VKAMP_GEMM_EPILOGUE_GLSL

#include "vkamp/gpu_abi/gemm_epilogue.h"

// v: alpha acc (+ C) (+ bias) in fp32, for output element `at`. Forward:
// f of v rounded to the format (z, kept when asked): the unfused GEMM,
// bias_add and activation, less the rounding of alpha acc before the bias.
// Backward (kGemmZGrad): the rounded product times f'(z), as
// activation.comp's backward computes dY f'(z) from the stored dY.
float activation_epilogue(float v, uint at) {
  if (ACT == ACT_NONE) return v;
  if (p.z_mode == kGemmZGrad) return round_to_sfp(v) * activate_grad(ACT, sfp2f(zs[at]));
  if (p.z_mode == kGemmZKeep) zs[at] = f2sfp(v);
  return activate(ACT, round_to_sfp(v));
}

#endif
