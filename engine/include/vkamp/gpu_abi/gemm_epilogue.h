// What the GEMM's epilogue does with its dense m x n z binding beside an
// activation (GemmPush.z_mode, GemmReducePush.z_mode; shaders/common/
// gemm_epilogue.glsl). Valid GLSL and C++.
#ifndef VKAMP_INTERFACE_GEMM_EPILOGUE_H
#define VKAMP_INTERFACE_GEMM_EPILOGUE_H

#ifdef __cplusplus
#include <cstdint>
#define VKAMP_CODE(name, value) inline constexpr uint32_t name = value;
#else
#define VKAMP_CODE(name, value) const uint name = value;
#endif

VKAMP_CODE(kGemmZNone, 0u)  // C = f(z)
VKAMP_CODE(kGemmZKeep, 1u)  // C = f(z), and z stored for a backward that needs f'(z)
// The backward form: C = (the product, rounded) f'(z), z read. An
// activation's dZ = dY f'(z), computed by the GEMM that makes dY.
VKAMP_CODE(kGemmZGrad, 2u)

#undef VKAMP_CODE
#endif
