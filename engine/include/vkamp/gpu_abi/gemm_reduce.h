// gemm_reduce.comp (ops::detail::add_partials): adds `splits` fp32 partials
// of `count` values in order, and runs a split GEMM's epilogue.
#ifndef VKAMP_INTERFACE_GEMM_REDUCE_H
#define VKAMP_INTERFACE_GEMM_REDUCE_H
#include "gemm_epilogue.h"
#include "macros.h"

VKAMP_PUSH(GemmReducePush)
  uint count;
  uint splits;
  uint accumulate;
  uint cols;
  uint z_mode;  // gemm_epilogue.h's kGemmZ*
VKAMP_PUSH_END(GemmReducePush, p, 20)

VKAMP_SHADER(GemmReduceShader, gemm_reduce, 4, GemmReducePush)  // partial, c, bias, z

#endif
