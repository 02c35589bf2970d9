// Structural checks of a module nv_to_khr wrote. spirv-val 2023.1 (Debian
// 12) and the 1.3.239 validation layer do not know CooperativeMatrixKHR, so
// nothing on this toolchain validates a .khr module; these checks are what
// the build can do instead (the driver that runs the module is the only
// full validator):
// - every result id is below the bound and defined once; every id operand
//   is defined; outside function bodies, before it is used;
// - no two OpTypeInt/Float/Vector/Pointer/CooperativeMatrixKHR are the same
//   type;
// - nothing of SPV_NV_cooperative_matrix is left (opcodes, capability,
//   extension) and the KHR capability and extension are declared;
// - every OpTypeCooperativeMatrixKHR's Use is a 32-bit integer constant 0..2;
//   every load/store's MemoryLayout a constant 0 or 1 (or a specialization
//   constant selecting one) and its object a KHR
//   matrix; every mul-add takes MatrixA x MatrixB + MatrixAccumulator and
//   returns C's type.
#pragma once
#include "spirv_module.hpp"

namespace spirv_khr {

// Throws Error naming the first instruction that breaks a rule.
void check_khr_module(const Module& m);

}  // namespace spirv_khr
