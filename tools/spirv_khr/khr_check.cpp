#include "khr_check.hpp"

#include <set>

namespace spirv_khr {
namespace {

// The instructions of the sections before the types that may name ids
// defined further on.
bool names_later_ids(uint16_t o) {
  return o == op::EntryPoint || o == 16 /* OpExecutionMode */ || o == 331 /* OpExecutionModeId */ ||
         o == op::GroupDecorate || o == op::GroupMemberDecorate;
}

class Checker {
 public:
  explicit Checker(const Module& m) : m_(m), def_(m.bound(), nullptr) {}
  void run();

 private:
  [[noreturn]] void fail(const Instruction& in, const std::string& why) const {
    throw Error(in.describe() + ": " + why);
  }
  const Instruction& def(const Instruction& at, uint32_t id) const {
    if (id >= def_.size() || !def_[id]) fail(at, "%" + std::to_string(id) + " is never defined");
    return *def_[id];
  }
  uint32_t constant_value(const Instruction& at, uint32_t id) const {
    const Instruction& c = def(at, id);
    if (c.opcode != op::Constant || c.words.size() != 3) fail(at, "%" + std::to_string(id) + " is not a 32-bit constant");
    const Instruction& t = def(c, c.words[0]);
    if (t.opcode != op::TypeInt || t.words[1] != 32) fail(at, "%" + std::to_string(id) + " is not a 32-bit integer");
    return c.words[2];
  }
  // The Use of a KHR matrix value's type.
  uint32_t use_of(const Instruction& at, uint32_t value) const {
    const Instruction& t = def(at, def(at, value).type());
    if (t.opcode != op::TypeCooperativeMatrixKHR) fail(at, "%" + std::to_string(value) + " is not a KHR matrix");
    return constant_value(t, t.words[5]);
  }
  void check_matrix_ops(const Instruction& in) const;

  const Module& m_;
  std::vector<const Instruction*> def_;
};

void Checker::run() {
  if (m_.header[0] != kMagic) throw Error("no SPIR-V magic number");
  for (const Instruction& in : m_.instructions) {
    if (!in.has_result()) continue;
    if (in.result() == 0 || in.result() >= m_.bound()) fail(in, "result id outside the bound");
    if (def_[in.result()]) fail(in, "defined twice");
    def_[in.result()] = &in;
  }
  // Outside function bodies every id is defined before use (forward
  // references are for function bodies, names and decorations only).
  std::vector<bool> seen(m_.bound(), false);
  std::set<std::vector<uint32_t>> types;
  bool in_function = false, capability = false, extension = false;
  for (const Instruction& in : m_.instructions) {
    if (in.opcode == op::Function) in_function = true;
    if (in.opcode >= op::CooperativeMatrixLoadNV && in.opcode <= op::CooperativeMatrixLengthNV)
      fail(in, "an NV cooperative-matrix instruction is left");
    if (in.opcode == op::TypeCooperativeMatrixNV) fail(in, "an NV cooperative-matrix type is left");
    if (in.opcode == op::Capability) {
      if (in.words[0] == kCapabilityCooperativeMatrixNV) fail(in, "the NV capability is left");
      capability = capability || in.words[0] == kCapabilityCooperativeMatrixKHR;
    }
    if (in.opcode == op::Extension) {
      if (words_string(in.words) == "SPV_NV_cooperative_matrix") fail(in, "the NV extension is left");
      extension = extension || words_string(in.words) == "SPV_KHR_cooperative_matrix";
    }
    const std::vector<size_t> ids = in.id_operands();
    if (in.has_type()) def(in, in.type());
    for (size_t k : ids) def(in, in.words[k]);
    if (!in_function && !is_annotation(in.opcode) && !names_later_ids(in.opcode)) {
      if (in.has_type() && !seen[in.type()]) fail(in, "its type is defined after it");
      for (size_t k : ids)
        if (!seen[in.words[k]]) fail(in, "%" + std::to_string(in.words[k]) + " is used before its definition");
    }
    if (in.has_result()) seen[in.result()] = true;
    switch (in.opcode) {
      case op::TypeInt: case op::TypeFloat: case op::TypeVector: case op::TypePointer:
      case op::TypeCooperativeMatrixKHR: {
        std::vector<uint32_t> shape{in.opcode};
        shape.insert(shape.end(), in.words.begin() + 1, in.words.end());
        if (!types.insert(shape).second) fail(in, "the same type as one before it");
        break;
      }
    }
    check_matrix_ops(in);
  }
  if (!capability || !extension) throw Error("the module declares no CooperativeMatrixKHR capability and extension");
}

void Checker::check_matrix_ops(const Instruction& in) const {
  const auto& w = in.words;
  // A 32-bit constant 0 or 1, or a specialization constant choosing between them.
  auto layout = [&](uint32_t id) {
    const Instruction& c = def(in, id);
    if (c.opcode == op::SpecConstantOp && c.words.size() == 6 && c.words[2] == op::Select) {
      if (constant_value(in, c.words[4]) > 1 || constant_value(in, c.words[5]) > 1)
        fail(in, "MemoryLayout chooses other than RowMajorKHR or ColumnMajorKHR");
      return;
    }
    if (constant_value(in, id) > 1) fail(in, "MemoryLayout is neither RowMajorKHR nor ColumnMajorKHR");
  };
  switch (in.opcode) {
    case op::TypeCooperativeMatrixKHR:
      if (w.size() != 6) fail(in, "not 6 operands");
      if (constant_value(in, w[5]) > 2) fail(in, "its Use is not MatrixA, MatrixB or MatrixAccumulator");
      break;
    case op::CooperativeMatrixLoadKHR:
      use_of(in, in.result());
      layout(w[3]);
      break;
    case op::CooperativeMatrixStoreKHR:
      use_of(in, w[1]);
      layout(w[2]);
      break;
    case op::CooperativeMatrixMulAddKHR:
      if (use_of(in, w[2]) != 0 || use_of(in, w[3]) != 1 || use_of(in, w[4]) != 2)
        fail(in, "its operands are not MatrixA, MatrixB, MatrixAccumulator");
      if (def(in, w[4]).type() != in.type()) fail(in, "its result type is not C's");
      break;
    case op::CooperativeMatrixLengthKHR:
      if (def(in, w[2]).opcode != op::TypeCooperativeMatrixKHR) fail(in, "its Type is not a KHR matrix type");
      break;
  }
}

}  // namespace

void check_khr_module(const Module& m) { Checker(m).run(); }

}  // namespace spirv_khr
