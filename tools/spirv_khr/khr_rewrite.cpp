#include "khr_rewrite.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "use_inference.hpp"

namespace spirv_khr {
namespace {

constexpr uint8_t kNone = 255;  // a function type's slot that holds no matrix
// The roles a derived type is made for: one for a matrix, pointer, array or
// struct; a function type's return then each parameter.
using Key = std::vector<uint8_t>;

const char* const kNvExtension = "SPV_NV_cooperative_matrix";
const char* const kKhrExtension = "SPV_KHR_cooperative_matrix";

class Rewriter {
 public:
  explicit Rewriter(const Module& in) : in_(in), uses_(in), next_id_(in.bound()) {}
  Module run();

 private:
  const Instruction& def(uint32_t id) const;
  Key key_of_value(size_t inst) const;
  Key function_key(size_t inst) const;
  void need_type(uint32_t type, const Key& key);
  void need_constant(uint32_t id, Use u);
  void collect();
  void allocate();
  uint32_t constant(uint32_t value);
  uint32_t type_id(uint32_t type, const Key& key) const;
  uint32_t layout(uint32_t column_major, const Instruction& at) const;
  uint32_t length_type(const Instruction& at, uint32_t nv_type) const;
  void plan_spec_layouts();
  void emit_type(const Instruction& in, const Key& key);
  void emit_body(size_t i);

  const Module& in_;
  UseInference uses_;
  Module out_;
  uint32_t next_id_;
  std::map<uint32_t, std::set<Key>> type_keys_;
  std::map<uint32_t, std::set<Use>> constant_uses_;
  std::map<std::pair<uint32_t, Key>, uint32_t> type_ids_;
  std::map<std::pair<uint32_t, Use>, uint32_t> constant_ids_;
  size_t first_matrix_type_ = 0;
  uint32_t int_type_ = 0;
  std::map<uint32_t, uint32_t> int_constants_;  // value -> id (Use and MemoryLayout operands)
  std::vector<Instruction> new_constants_;
  std::map<uint32_t, uint32_t> spec_layouts_;  // bool specialization constant -> its MemoryLayout
  std::vector<Instruction> late_constants_;    // those MemoryLayouts, before the first function
};

const Instruction& Rewriter::def(uint32_t id) const {
  const std::optional<size_t> d = uses_.definition(id);
  if (!d) throw Error("%" + std::to_string(id) + " is used but never defined");
  return in_.instructions[*d];
}

Key Rewriter::key_of_value(size_t inst) const {
  return {uint8_t(uses_.use_of_value(in_.instructions[inst].result()))};
}

// OpFunction at `inst`: the roles of its result and of its parameters,
// which follow it.
Key Rewriter::function_key(size_t inst) const {
  const Instruction& f = in_.instructions[inst];
  Key key{uses_.carries(f.type()) ? uint8_t(uses_.use_of_value(f.result())) : kNone};
  for (size_t p = inst + 1; p < in_.instructions.size() && in_.instructions[p].opcode == op::FunctionParameter; ++p)
    key.push_back(uses_.carries(in_.instructions[p].type()) ? key_of_value(p)[0] : kNone);
  return key;
}

void Rewriter::need_type(uint32_t type, const Key& key) {
  if (!uses_.carries(type) || !type_keys_[type].insert(key).second) return;
  const Instruction& t = def(type);
  const auto& w = t.words;
  switch (t.opcode) {
    case op::TypePointer: need_type(w[2], key); break;
    case op::TypeArray: case op::TypeRuntimeArray: need_type(w[1], key); break;
    case op::TypeStruct:
      for (size_t k = 1; k < w.size(); ++k) need_type(w[k], key);
      break;
    case op::TypeFunction:
      for (size_t k = 1; k < w.size(); ++k)
        if (key[k - 1] != kNone) need_type(w[k], {key[k - 1]});
      break;
    default: break;
  }
}

void Rewriter::need_constant(uint32_t id, Use u) {
  if (!constant_uses_[id].insert(u).second) return;
  const Instruction& c = def(id);
  need_type(c.type(), {uint8_t(u)});
  if (c.opcode == op::ConstantComposite || c.opcode == op::SpecConstantComposite)
    for (size_t k = 2; k < c.words.size(); ++k)
      if (uses_.is_matrix_constant(c.words[k])) need_constant(c.words[k], u);
}

// Every (type, roles) and (constant, role) the module's values need.
void Rewriter::collect() {
  for (size_t i = 0; i < in_.instructions.size(); ++i) {
    const Instruction& in = in_.instructions[i];
    if (in.opcode == op::TypeCooperativeMatrixNV && !first_matrix_type_) first_matrix_type_ = i + 1;
    if (in.opcode == op::TypeCooperativeMatrixKHR || in.opcode == op::CooperativeMatrixMulAddKHR)
      throw Error(in.describe() + ": the module already uses SPV_KHR_cooperative_matrix");
    if (in.has_result() && uses_.is_matrix_constant(in.result())) continue;  // per use, below
    if (is_annotation(in.opcode)) continue;
    if (in.has_type() && uses_.carries(in.type())) need_type(in.type(), key_of_value(i));
    if (in.opcode == op::Function && uses_.carries(in.words[3])) need_type(in.words[3], function_key(i));
    for (size_t k : in.id_operands())
      if (uses_.is_matrix_constant(in.words[k])) need_constant(in.words[k], uses_.use_at(i, k));
  }
}

uint32_t Rewriter::constant(uint32_t value) {
  auto it = int_constants_.find(value);
  if (it != int_constants_.end()) return it->second;
  for (size_t i = 0; i + 1 < first_matrix_type_; ++i) {  // one the module has, defined in time
    const Instruction& c = in_.instructions[i];
    if (c.opcode == op::Constant && c.words.size() == 3 && c.words[0] == int_type_ && c.words[2] == value)
      return int_constants_[value] = c.words[1];
  }
  const uint32_t id = next_id_++;
  new_constants_.push_back({op::Constant, {int_type_, id, value}});
  return int_constants_[value] = id;
}

void Rewriter::allocate() {
  if (!first_matrix_type_) throw Error("no OpTypeCooperativeMatrixNV: nothing to translate");
  // Use and MemoryLayout take a 32-bit integer constant: the type of the
  // first matrix type's Scope (a 32-bit integer constant by the NV rules).
  const Instruction& scope = def(in_.instructions[first_matrix_type_ - 1].words[2]);
  int_type_ = scope.type();
  const Instruction& int_type = def(int_type_);
  if (scope.opcode != op::Constant || int_type.opcode != op::TypeInt || int_type.words[1] != 32)
    throw Error(in_.instructions[first_matrix_type_ - 1].describe() + ": its Scope is not a 32-bit integer constant");
  for (const Instruction& in : in_.instructions) {
    if (!in.has_result()) continue;
    const uint32_t id = in.result();
    auto t = type_keys_.find(id);
    if (t != type_keys_.end() && (in.opcode == op::TypeCooperativeMatrixNV || in.opcode == op::TypePointer ||
                                  in.opcode == op::TypeArray || in.opcode == op::TypeRuntimeArray ||
                                  in.opcode == op::TypeStruct || in.opcode == op::TypeFunction)) {
      bool first = true;
      for (const Key& key : t->second) {
        type_ids_[{id, key}] = first ? id : next_id_++;
        first = false;
        if (in.opcode == op::TypeCooperativeMatrixNV) constant(key[0]);
      }
    }
    auto c = constant_uses_.find(id);
    if (c != constant_uses_.end()) {
      bool first = true;
      for (Use u : c->second) {
        constant_ids_[{id, u}] = first ? id : next_id_++;
        first = false;
      }
    }
  }
}

uint32_t Rewriter::type_id(uint32_t type, const Key& key) const {
  auto it = type_ids_.find({type, key});
  if (it == type_ids_.end()) throw Error("internal: no KHR type made for %" + std::to_string(type));
  return it->second;
}

// The KHR type a length is asked of: the NV type's only role. (The number
// of elements an invocation holds may differ by role, so a type of several
// roles is refused, as is one no value has.)
uint32_t Rewriter::length_type(const Instruction& at, uint32_t nv_type) const {
  auto keys = type_keys_.find(nv_type);
  const size_t roles = keys == type_keys_.end() ? 0 : keys->second.size();
  if (roles != 1)
    throw Error(at.describe() + ": the length of %" + std::to_string(nv_type) + ", a matrix type of " +
                std::to_string(roles) + " roles: which KHR type is meant cannot be known");
  return type_id(nv_type, *keys->second.begin());
}

// KHR's MemoryLayout for NV's ColumnMajor bool: the constant 0 or 1, or for
// a specialization-constant bool (a kernel whose transposes are
// specialization constants) an OpSpecConstantOp Select between them,
// which allocate() numbered and run() puts after the global constants.
uint32_t Rewriter::layout(uint32_t column_major, const Instruction& at) const {
  const Instruction& c = def(column_major);
  if (c.opcode == op::ConstantTrue || c.opcode == op::ConstantFalse)
    return int_constants_.at(c.opcode == op::ConstantTrue ? 1u : 0u);
  auto spec = spec_layouts_.find(column_major);
  if (spec != spec_layouts_.end()) return spec->second;
  throw Error(at.describe() + ": its ColumnMajor operand %" + std::to_string(column_major) +
              " is not a boolean constant or specialization constant (KHR wants a constant MemoryLayout)");
}

void Rewriter::plan_spec_layouts() {
  for (const Instruction& in : in_.instructions) {
    if (in.opcode != op::CooperativeMatrixLoadNV && in.opcode != op::CooperativeMatrixStoreNV) continue;
    const uint32_t cm = in.words[in.opcode == op::CooperativeMatrixLoadNV ? 4 : 3];
    const Instruction& c = def(cm);
    const bool spec_bool = c.opcode == op::SpecConstantTrue || c.opcode == op::SpecConstantFalse ||
                           (c.opcode == op::SpecConstantOp && def(c.type()).opcode == op::TypeBool);
    if (!spec_bool || spec_layouts_.count(cm)) continue;
    const uint32_t id = next_id_++;
    spec_layouts_[cm] = id;
    late_constants_.push_back({op::SpecConstantOp, {int_type_, id, op::Select, cm, constant(1), constant(0)}});
  }
}

void Rewriter::emit_type(const Instruction& in, const Key& key) {
  Instruction t = in;
  auto& w = t.words;
  w[0] = type_id(in.result(), key);
  switch (in.opcode) {
    case op::TypeCooperativeMatrixNV:
      t.opcode = op::TypeCooperativeMatrixKHR;
      w.push_back(int_constants_.at(key[0]));
      break;
    case op::TypePointer: w[2] = type_id(w[2], key); break;
    case op::TypeArray: case op::TypeRuntimeArray: w[1] = type_id(w[1], key); break;
    case op::TypeStruct:
      for (size_t k = 1; k < w.size(); ++k)
        if (uses_.carries(w[k])) w[k] = type_id(w[k], key);
      break;
    case op::TypeFunction:
      for (size_t k = 1; k < w.size(); ++k)
        if (key[k - 1] != kNone) w[k] = type_id(w[k], {key[k - 1]});
      break;
  }
  out_.instructions.push_back(std::move(t));
}

// One instruction outside the matrix types and constants.
void Rewriter::emit_body(size_t i) {
  const Instruction& in = in_.instructions[i];
  Instruction o = in;
  auto& w = o.words;
  for (size_t k : in.id_operands())
    if (uses_.is_matrix_constant(in.words[k])) w[k] = constant_ids_.at({in.words[k], uses_.use_at(i, k)});
  if (in.has_type() && uses_.carries(in.type())) w[0] = type_id(in.type(), key_of_value(i));
  switch (in.opcode) {
    case op::Function:
      if (uses_.carries(w[3])) w[3] = type_id(w[3], function_key(i));
      break;
    case op::CooperativeMatrixLoadNV:  // <Pointer, Stride, ColumnMajor> -> <Pointer, MemoryLayout, Stride>
      o.opcode = op::CooperativeMatrixLoadKHR;
      w[4] = w[3];
      w[3] = layout(in.words[4], in);
      break;
    case op::CooperativeMatrixStoreNV:
      o.opcode = op::CooperativeMatrixStoreKHR;
      w[3] = w[2];
      w[2] = layout(in.words[3], in);
      break;
    case op::CooperativeMatrixMulAddNV: {
      o.opcode = op::CooperativeMatrixMulAddKHR;
      // Bits 0x1 A, 0x2 B, 0x4 C, 0x8 result: signed integer components.
      uint32_t mask = 0, bit = 1;
      for (uint32_t matrix_type : {def(in.words[2]).type(), def(in.words[3]).type(), def(in.words[4]).type(), in.type()}) {
        const Instruction& component = def(def(matrix_type).words[1]);
        if (component.opcode == op::TypeInt && component.words[2] == 1) mask |= bit;
        bit <<= 1;
      }
      if (mask) w.push_back(mask);
      break;
    }
    case op::CooperativeMatrixLengthNV:
      o.opcode = op::CooperativeMatrixLengthKHR;
      w[2] = length_type(in, in.words[2]);
      break;
    case op::SpecConstantOp:  // <OpCooperativeMatrixLengthNV, Type>, as glslang writes .length()
      if (w[2] == op::CooperativeMatrixLengthNV) {
        w[2] = op::CooperativeMatrixLengthKHR;
        w[3] = length_type(in, in.words[3]);
      }
      break;
    case op::Capability:
      if (w[0] == kCapabilityCooperativeMatrixNV) w[0] = kCapabilityCooperativeMatrixKHR;
      break;
    case op::Extension:
      if (words_string(w) == kNvExtension) w = string_words(kKhrExtension);
      break;
  }
  out_.instructions.push_back(std::move(o));
}

Module Rewriter::run() {
  bool nv = false;
  for (const Instruction& in : in_.instructions)
    nv = nv || (in.opcode == op::Capability && in.words[0] == kCapabilityCooperativeMatrixNV);
  if (!nv) throw Error("no CooperativeMatrixNV capability: not an SPV_NV_cooperative_matrix module");
  collect();
  allocate();
  constant(0);  // MemoryLayout: RowMajorKHR and ColumnMajorKHR
  constant(1);
  plan_spec_layouts();
  std::copy(std::begin(in_.header), std::end(in_.header), out_.header);
  for (size_t i = 0; i < in_.instructions.size(); ++i) {
    const Instruction& in = in_.instructions[i];
    if (i + 1 == first_matrix_type_)
      out_.instructions.insert(out_.instructions.end(), new_constants_.begin(), new_constants_.end());
    if (in.opcode == op::Function) {
      out_.instructions.insert(out_.instructions.end(), late_constants_.begin(), late_constants_.end());
      late_constants_.clear();
    }
    const uint32_t target = in.words.empty() ? 0 : in.words[0];
    if (is_annotation(in.opcode) && (uses_.carries(target) || uses_.is_matrix_constant(target))) {
      // One copy per KHR type or constant made from the target (none if unused).
      auto copy_for = [&](uint32_t id) {
        out_.instructions.push_back(in);
        out_.instructions.back().words[0] = id;
      };
      for (const auto& [k, id] : type_ids_)
        if (k.first == target) copy_for(id);
      for (const auto& [k, id] : constant_ids_)
        if (k.first == target) copy_for(id);
      continue;
    }
    if (in.has_result() && uses_.carries(in.result())) {
      for (const Key& key : type_keys_[in.result()]) emit_type(in, key);
      continue;  // a matrix type no value needs is dropped
    }
    if (in.has_result() && uses_.is_matrix_constant(in.result())) {
      for (Use u : constant_uses_[in.result()]) {
        Instruction c = in;
        c.words[0] = type_id(in.type(), {uint8_t(u)});
        c.words[1] = constant_ids_.at({in.result(), u});
        for (size_t k = 2; k < c.words.size(); ++k)
          if (uses_.is_matrix_constant(in.words[k])) c.words[k] = constant_ids_.at({in.words[k], u});
        out_.instructions.push_back(std::move(c));
      }
      continue;
    }
    emit_body(i);
  }
  out_.header[3] = next_id_;
  return out_;
}

}  // namespace

Module nv_to_khr(const Module& nv) { return Rewriter(nv).run(); }

std::vector<uint32_t> nv_to_khr(std::span<const uint32_t> nv) { return serialize(nv_to_khr(parse(nv))); }

}  // namespace spirv_khr
