// SPV_NV_cooperative_matrix -> SPV_KHR_cooperative_matrix: the .khr build of
// a cooperative-matrix shader, from the SPIR-V glslang 12 writes for
// GL_NV_cooperative_matrix (glslang 12 cannot compile GL_KHR_cooperative_matrix).
//
// What changes (SPIRV-Headers' grammar gives the operand orders):
// - CooperativeMatrixNV (5357) -> CooperativeMatrixKHR (6022), and the
//   extension string SPV_NV_cooperative_matrix -> SPV_KHR_cooperative_matrix;
// - OpTypeCooperativeMatrixNV (5358) <Component, Scope, Rows, Columns> ->
//   OpTypeCooperativeMatrixKHR (4456) <..., Use>, one KHR type per role the
//   NV type's values play (use_inference.hpp), with pointer, array, struct
//   and function types split to match, and decorations and names copied to
//   each; matrix constants copied per role the same way;
// - OpCooperativeMatrixLoadNV (5359) <Pointer, Stride, ColumnMajor, [Memory]>
//   -> OpCooperativeMatrixLoadKHR (4457) <Pointer, MemoryLayout, Stride, [Memory]>,
//   and OpCooperativeMatrixStoreNV (5360) -> OpCooperativeMatrixStoreKHR (4458)
//   likewise: NV's ColumnMajor bool constant becomes a 32-bit integer
//   constant, RowMajorKHR 0 or ColumnMajorKHR 1 (a bool specialization
//   constant becomes OpSpecConstantOp Select between them);
// - OpCooperativeMatrixMulAddNV (5361) -> OpCooperativeMatrixMulAddKHR (4459),
//   with the Matrix*SignedComponents operands for signed integer components
//   (NV took signedness from the types); OpCooperativeMatrixLengthNV (5362)
//   -> OpCooperativeMatrixLengthKHR (4460) of the KHR type.
// New constants (Use, MemoryLayout) go before the first matrix type, with
// the type of its Scope operand; the id bound grows by the new ids. Ids of
// values never change; types keep theirs for their first role.
//
// Anything else that touches a matrix, or that the pass cannot read, is an
// Error naming the instruction: the build fails rather than guessing.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "spirv_module.hpp"

namespace spirv_khr {

Module nv_to_khr(const Module& nv);
std::vector<uint32_t> nv_to_khr(std::span<const uint32_t> nv);

}  // namespace spirv_khr
