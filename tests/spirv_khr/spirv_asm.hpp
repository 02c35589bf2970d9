// Hand-written SPIR-V for the pass's tests: a module is built instruction by
// instruction with named ids, so each test states its input as a reader of
// the SPIR-V spec would, and finds instructions of the output by opcode.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "spirv_module.hpp"

namespace spirv_khr::test {

// SPIR-V enumerants the test modules use (the grammar's values).
enum : uint32_t {
  kShader = 1, kFloat16 = 9, kInt8 = 39, kVulkanMemoryModel = 5345, kLogical = 0, kVulkan = 3, kGLCompute = 5,
  kFunctionStorage = 7, kWorkgroup = 4, kPrivate = 6, kSubgroupScope = 3,
};

class Asm {
 public:
  uint32_t id() { return next_++; }
  // Appends an instruction (its result id, if any, among the operands).
  void op(uint16_t opcode, std::initializer_list<uint32_t> operands) {
    words_.push_back(uint32_t(operands.size() + 1) << 16 | opcode);
    words_.insert(words_.end(), operands);
  }
  void op(uint16_t opcode, const std::vector<uint32_t>& operands) {
    words_.push_back(uint32_t(operands.size() + 1) << 16 | opcode);
    words_.insert(words_.end(), operands.begin(), operands.end());
  }
  void str(uint16_t opcode, std::vector<uint32_t> before, const std::string& s) {
    std::vector<uint32_t> w = std::move(before);
    for (uint32_t x : string_words(s)) w.push_back(x);
    op(opcode, w);
  }
  std::vector<uint32_t> words() const {
    std::vector<uint32_t> w{kMagic, 0x00010300u, 0u, next_, 0u};
    w.insert(w.end(), words_.begin(), words_.end());
    return w;
  }

 private:
  uint32_t next_ = 1;
  std::vector<uint32_t> words_;
};

// The preamble and types every test module shares: an NV cooperative-matrix
// compute shader's capabilities, a main function's type, and fp16/fp32
// 16 x 16 subgroup matrices over a workgroup array of each.
struct Common {
  Asm a;
  uint32_t glsl = 0, main = 0, void_t = 0, fn_void = 0, uint_t = 0, int_t = 0, bool_t = 0, half = 0, flt = 0;
  uint32_t c0 = 0, c3 = 0, c16 = 0, c256 = 0, t = 0, f = 0, fzero = 0, hzero = 0;
  uint32_t mh = 0, mf = 0;  // the NV matrix types: fp16 and fp32, 16 x 16, subgroup
  uint32_t half_arr = 0, flt_arr = 0, p_wg_half_arr = 0, p_wg_flt_arr = 0, p_wg_half = 0, p_wg_flt = 0;
  uint32_t p_fn_mh = 0, p_fn_mf = 0, sh = 0, sf = 0;

  // Every id above is numbered up front, so names and decorations (which
  // come before the types) can refer to them.
  Common() {
    for (uint32_t* id : {&glsl, &main, &void_t, &fn_void, &uint_t, &int_t, &bool_t, &half, &flt, &c0, &c3, &c16,
                         &c256, &t, &f, &fzero, &hzero, &mh, &mf, &half_arr, &flt_arr, &p_wg_half_arr,
                         &p_wg_flt_arr, &p_wg_half, &p_wg_flt, &p_fn_mh, &p_fn_mf, &sh, &sf})
      *id = a.id();
  }

  // The capabilities, extensions, memory model and entry point.
  void header() {
    a.op(op::Capability, {kShader});
    a.op(op::Capability, {kFloat16});
    a.op(op::Capability, {kVulkanMemoryModel});
    a.op(op::Capability, {kCapabilityCooperativeMatrixNV});
    a.str(op::Extension, {}, "SPV_KHR_vulkan_memory_model");
    a.str(op::Extension, {}, "SPV_NV_cooperative_matrix");
    a.str(11 /* OpExtInstImport */, {glsl}, "GLSL.std.450");
    a.op(op::MemoryModel, {kLogical, kVulkan});
    a.str(op::EntryPoint, {kGLCompute, main}, "main");
    a.op(16 /* OpExecutionMode */, {main, 17 /* LocalSize */, 32, 1, 1});
  }
  void types() {
    a.op(op::TypeVoid, {void_t});
    a.op(op::TypeFunction, {fn_void, void_t});
    a.op(op::TypeInt, {uint_t, 32, 0});
    a.op(op::TypeInt, {int_t, 32, 1});
    a.op(op::TypeBool, {bool_t});
    a.op(op::TypeFloat, {half, 16});
    a.op(op::TypeFloat, {flt, 32});
    a.op(op::Constant, {uint_t, c0, 0});
    a.op(op::Constant, {uint_t, c3, kSubgroupScope});
    a.op(op::Constant, {uint_t, c16, 16});
    a.op(op::Constant, {uint_t, c256, 256});
    a.op(op::ConstantTrue, {bool_t, t});
    a.op(op::ConstantFalse, {bool_t, f});
    a.op(op::Constant, {flt, fzero, 0});
    a.op(op::Constant, {half, hzero, 0});
  }
  void matrix_types() {
    a.op(op::TypeCooperativeMatrixNV, {mh, half, c3, c16, c16});
    a.op(op::TypeCooperativeMatrixNV, {mf, flt, c3, c16, c16});
    a.op(op::TypeArray, {half_arr, half, c256});
    a.op(op::TypeArray, {flt_arr, flt, c256});
    a.op(op::TypePointer, {p_wg_half_arr, kWorkgroup, half_arr});
    a.op(op::TypePointer, {p_wg_flt_arr, kWorkgroup, flt_arr});
    a.op(op::TypePointer, {p_wg_half, kWorkgroup, half});
    a.op(op::TypePointer, {p_wg_flt, kWorkgroup, flt});
    a.op(op::TypePointer, {p_fn_mh, kFunctionStorage, mh});
    a.op(op::TypePointer, {p_fn_mf, kFunctionStorage, mf});
  }
  void shared_arrays() {
    a.op(op::Variable, {p_wg_half_arr, sh, kWorkgroup});
    a.op(op::Variable, {p_wg_flt_arr, sf, kWorkgroup});
  }
  // `main`'s OpFunction and first label.
  void begin_main() {
    a.op(op::Function, {void_t, main, 0, fn_void});
    a.op(op::Label, {a.id()});
  }
  void end_function() {
    a.op(253 /* OpReturn */, {});
    a.op(op::FunctionEnd, {});
  }
  // &shared[0] of the fp16 or fp32 array.
  uint32_t element(bool fp16) {
    const uint32_t p = a.id();
    a.op(op::AccessChain, {fp16 ? p_wg_half : p_wg_flt, p, fp16 ? sh : sf, c0});
    return p;
  }
  uint32_t load(uint32_t type, bool fp16, uint32_t column_major) {
    const uint32_t ptr = element(fp16), r = a.id();
    a.op(op::CooperativeMatrixLoadNV, {type, r, ptr, c16, column_major});
    return r;
  }
  uint32_t mul_add(uint32_t x, uint32_t y, uint32_t c) {
    const uint32_t r = a.id();
    a.op(op::CooperativeMatrixMulAddNV, {mf, r, x, y, c});
    return r;
  }
  void store(uint32_t m) {
    const uint32_t ptr = element(false);
    a.op(op::CooperativeMatrixStoreNV, {ptr, m, c16, f});
  }
};

}  // namespace spirv_khr::test
