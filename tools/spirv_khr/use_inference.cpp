#include "use_inference.hpp"

#include <numeric>

namespace spirv_khr {
namespace {

bool is_constant_opcode(uint16_t o) {
  return o == op::ConstantComposite || o == op::SpecConstantComposite || o == op::ConstantNull || o == op::Undef;
}

// Result = op(operands...), element-wise: every matrix operand shares the
// result's type, so its role (SPV_KHR_cooperative_matrix allows these, and
// the conversions, only between matrices of one Use).
bool is_elementwise(uint16_t o) {
  switch (o) {
    case op::CopyObject: case op::CopyLogical: case op::SNegate: case op::FNegate: case op::IAdd: case op::FAdd:
    case op::ISub: case op::FSub: case op::IMul: case op::FMul: case op::UDiv: case op::SDiv: case op::FDiv:
    case op::MatrixTimesScalar: case op::ConvertFToU: case op::ConvertFToS: case op::ConvertSToF:
    case op::ConvertUToF: case op::UConvert: case op::SConvert: case op::FConvert: case op::Bitcast:
      return true;
  }
  return false;
}

}  // namespace

const char* use_name(Use u) {
  switch (u) {
    case Use::MatrixA: return "MatrixA";
    case Use::MatrixB: return "MatrixB";
    case Use::Accumulator: return "MatrixAccumulator";
  }
  return "?";
}

UseInference::UseInference(const Module& m) : m_(m) {
  def_.assign(m.bound(), 0);
  for (size_t i = 0; i < m.instructions.size(); ++i) {
    const Instruction& in = m.instructions[i];
    if (!op_info(in.opcode)) refuse(i, "an instruction this pass does not know");
    if (!in.has_result()) continue;
    if (in.result() >= m.bound()) refuse(i, "result id past the module's bound " + std::to_string(m.bound()));
    if (def_[in.result()]) refuse(i, "a second definition of %" + std::to_string(in.result()));
    def_[in.result()] = i + 1;
  }
  classify_types();
  uint32_t function = 0;
  for (size_t i = 0; i < m.instructions.size(); ++i) {
    const Instruction& in = m.instructions[i];
    if (in.opcode == op::Function) function = in.result();
    if (in.opcode == op::FunctionParameter) params_[function].push_back(in.result());
  }
  function = 0;
  for (size_t i = 0; i < m.instructions.size(); ++i) {
    if (m.instructions[i].opcode == op::Function) function = m.instructions[i].result();
    apply(i, function);
  }
}

void UseInference::classify_types() {
  carrier_.assign(m_.bound(), false);
  std::vector<uint32_t> forward;
  for (const Instruction& in : m_.instructions) {
    const auto& w = in.words;
    auto c = [&](uint32_t id) { return id < carrier_.size() && carrier_[id]; };
    bool carries = false;
    switch (in.opcode) {
      case op::TypeCooperativeMatrixNV: carries = true; break;
      case op::TypePointer: carries = c(w[2]); break;
      case op::TypeArray: case op::TypeRuntimeArray: carries = c(w[1]); break;
      case op::TypeStruct: case op::TypeFunction:
        for (size_t k = 1; k < w.size(); ++k) carries = carries || c(w[k]);
        break;
      case op::TypeForwardPointer: forward.push_back(w[0]); break;
      default: continue;
    }
    if (in.opcode != op::TypeForwardPointer) carrier_[w[0]] = carries;
  }
  for (uint32_t p : forward)
    if (carrier_[p]) refuse(*definition(p), "a forward-declared pointer to a cooperative matrix");
}

bool UseInference::is_matrix_constant(uint32_t id) const {
  const std::optional<size_t> d = definition(id);
  if (!d) return false;
  const Instruction& in = m_.instructions[*d];
  return is_constant_opcode(in.opcode) && carries(in.type());
}

std::optional<size_t> UseInference::definition(uint32_t id) const {
  if (id >= def_.size() || def_[id] == 0) return std::nullopt;
  return def_[id] - 1;
}

size_t UseInference::node_of_value(uint32_t id) {
  auto [it, fresh] = value_node_.try_emplace(id, parent_.size());
  if (fresh) {
    parent_.push_back(parent_.size());
    classes_.push_back({});
  }
  return it->second;
}

size_t UseInference::node_at(size_t inst, size_t word) {
  const uint32_t id = m_.instructions[inst].words[word];
  if (!is_matrix_constant(id)) return node_of_value(id);
  auto [it, fresh] = site_node_.try_emplace({inst, word}, parent_.size());
  if (fresh) {
    parent_.push_back(parent_.size());
    classes_.push_back({});
  }
  return it->second;
}

size_t UseInference::find(size_t n) const {
  while (parent_[n] != n) n = parent_[n] = parent_[parent_[n]];
  return n;
}

void UseInference::name_role(size_t n, Use u, size_t inst) {
  Class& c = classes_[find(n)];
  if (c.use && *c.use != u)
    refuse(inst, std::string("a matrix it takes as ") + use_name(u) + " is " + use_name(*c.use) + " at " +
                     m_.instructions[c.set_by].describe() + " (KHR matrices have one Use each)");
  if (!c.use) c = {u, inst};
}

void UseInference::unite(size_t a, size_t b, size_t inst) {
  a = find(a);
  b = find(b);
  if (a == b) return;
  if (classes_[b].use) name_role(a, *classes_[b].use, classes_[b].set_by);
  parent_[b] = a;
  (void)inst;
}

Use UseInference::use_of_value(uint32_t id) const {
  auto it = value_node_.find(id);
  if (it == value_node_.end()) return Use::Accumulator;
  return classes_[find(it->second)].use.value_or(Use::Accumulator);
}

Use UseInference::use_at(size_t inst, size_t word) const {
  const uint32_t id = m_.instructions[inst].words[word];
  if (!is_matrix_constant(id)) return use_of_value(id);
  auto it = site_node_.find({inst, word});
  if (it == site_node_.end()) return Use::Accumulator;
  return classes_[find(it->second)].use.value_or(Use::Accumulator);
}

void UseInference::refuse(size_t inst, const std::string& why) const {
  throw Error(m_.instructions[inst].describe() + ": " + why);
}

void UseInference::apply(size_t i, uint32_t function) {
  const Instruction& in = m_.instructions[i];
  const auto& w = in.words;
  auto value_carries = [&](size_t word) {
    const std::optional<size_t> d = definition(w[word]);
    return d && carries(m_.instructions[*d].type());
  };
  const bool result_carries = in.has_type() && carries(in.type());
  auto with_result = [&](size_t word) { unite(node_of_value(in.result()), node_at(i, word), i); };
  switch (in.opcode) {
    case op::TypeCooperativeMatrixNV: case op::TypePointer: case op::TypeArray: case op::TypeRuntimeArray:
    case op::TypeStruct: case op::TypeFunction: case op::ConstantComposite: case op::SpecConstantComposite:
    case op::ConstantNull: case op::Undef:
      return;  // types and constants: classed per use
    case op::Variable:
      if (result_carries) node_of_value(in.result());
      if (result_carries && w.size() > 3) with_result(3);
      return;
    case op::Load:
      if (result_carries) with_result(2);
      return;
    case op::Store: case op::CopyMemory:
      if (value_carries(0)) unite(node_at(i, 0), node_at(i, 1), i);
      return;
    case op::AccessChain: case op::InBoundsAccessChain: case op::PtrAccessChain: case op::CompositeExtract:
      if (result_carries) with_result(2);  // else an element of a matrix: a scalar
      return;
    case op::CompositeInsert:
      if (result_carries) with_result(3);
      if (result_carries && value_carries(2)) with_result(2);
      return;
    case op::CompositeConstruct:
      for (size_t k = 2; result_carries && k < w.size(); ++k)
        if (value_carries(k)) with_result(k);
      return;
    case op::Select:
      if (result_carries) {
        with_result(3);
        with_result(4);
      }
      return;
    case op::Phi:
      for (size_t k = 2; result_carries && k < w.size(); k += 2) with_result(k);
      return;
    case op::Function: case op::FunctionParameter: case op::CooperativeMatrixLoadNV:
      if (result_carries) node_of_value(in.result());
      return;
    case op::FunctionCall: {
      if (result_carries) unite(node_of_value(in.result()), node_of_value(w[2]), i);
      const std::vector<uint32_t>& params = params_[w[2]];
      if (params.size() != w.size() - 3) refuse(i, "argument count differs from %" + std::to_string(w[2]) + "'s");
      for (size_t k = 0; k < params.size(); ++k)
        if (value_carries(3 + k)) unite(node_of_value(params[k]), node_at(i, 3 + k), i);
      return;
    }
    case op::ReturnValue:
      if (value_carries(0)) unite(node_of_value(function), node_at(i, 0), i);
      return;
    case op::CooperativeMatrixStoreNV:
      node_at(i, 1);
      return;
    case op::CooperativeMatrixMulAddNV:
      name_role(node_at(i, 2), Use::MatrixA, i);
      name_role(node_at(i, 3), Use::MatrixB, i);
      name_role(node_at(i, 4), Use::Accumulator, i);
      name_role(node_of_value(in.result()), Use::Accumulator, i);
      return;
    case op::CooperativeMatrixLengthNV:
      return;  // a type operand: khr_rewrite.cpp picks its KHR type
    case op::SpecConstantOp:  // glslang's .length(): a constant, the same type operand
      if (w[2] == op::CooperativeMatrixLengthNV) return;
      break;
    default:
      break;
  }
  if (is_annotation(in.opcode)) return;
  if (is_elementwise(in.opcode)) {
    for (size_t k = 2; result_carries && k < w.size(); ++k)
      if (value_carries(k)) with_result(k);
    return;
  }
  // Anything else must not touch a matrix: its role could not be known.
  if (result_carries) refuse(i, "produces a cooperative matrix, which this pass cannot class");
  for (size_t k : in.id_operands()) {
    const std::optional<size_t> d = definition(w[k]);
    if (carries(w[k]) || (d && carries(m_.instructions[*d].type())))
      refuse(i, "takes the cooperative matrix %" + std::to_string(w[k]) + ", which this pass cannot class");
  }
}

}  // namespace spirv_khr
