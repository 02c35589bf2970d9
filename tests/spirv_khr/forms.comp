#version 450
// Every GL_NV_cooperative_matrix form glslang 12 compiles, for the SPV_NV ->
// SPV_KHR pass's tests (test_spirv_khr.cpp): matrices through functions (in,
// inout, out and returned), arrays, locals and globals, conditionals and
// loops (glslang writes them through variables, not OpPhi or OpSelect: the
// hand-written tests have those), construction from a scalar, element access,
// .length() (a specialization-constant op), arithmetic, a conversion, loads
// and stores row- and column-major and by a specialization constant, and
// one fp16 type as A and as B. Never run: only translated.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_NV_integer_cooperative_matrix : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer H { float16_t h[]; };
layout(std430, binding = 1) buffer F { float f[]; };
layout(std430, binding = 2) buffer I { int ints[]; };
layout(constant_id = 0) const uint N = 2;
layout(constant_id = 1) const uint TRANS = 1;  // as gemm_common.glsl's TRANS_A
shared float16_t tile[16 * 16 * 2];

#define HALF fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define FULL fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
FULL acc[N];  // global (Private) array, as the kernel holds its accumulators

FULL madd(HALF a, HALF b, FULL c) { return coopMatMulAddNV(a, b, c); }
void load_pair(out HALF a, inout HALF b, uint at) {
  coopMatLoadNV(a, tile, at, 16u, false);
  coopMatLoadNV(b, h, at, 16u, TRANS != 0u);  // a specialization-constant layout
}
FULL scaled(FULL c, float s) { return c * s; }

void main() {
  for (uint i = 0u; i < N; ++i) acc[i] = FULL(0.0);
  HALF a, b = HALF(float16_t(1.0));
  load_pair(a, b, gl_WorkGroupID.x * 256u);
  HALF frag[2];
  frag[0] = a;
  frag[1] = -a + a;
  for (uint k = 0u; k < 2u; ++k) acc[k % N] = madd(frag[k], b, acc[k % N]);
  FULL c = gl_WorkGroupID.y > 0u ? acc[0] : scaled(acc[N - 1u], 0.5);
  for (int e = 0; e < c.length(); ++e) c[e] = max(c[e], 0.0);
  icoopmatNV<32, gl_ScopeSubgroup, 16, 16> counts;
  coopMatLoadNV(counts, ints, 0u, 16u, true);
  HALF narrow = HALF(counts);  // integers converted to an fp16 operand
  c = coopMatMulAddNV(narrow, b, c / FULL(2.0));
  coopMatStoreNV(c, f, gl_WorkGroupID.x * 256u, 16u, false);
}
