// Which role (KHR "Use") each cooperative-matrix value of an NV module
// plays. SPV_NV_cooperative_matrix types carry no role; SPV_KHR ones do
// (MatrixA, MatrixB, MatrixAccumulator), so every value that holds a matrix,
// directly or through a pointer, array, struct or function, is put in a
// class with everything it flows to or from (loads, stores, OpPhi,
// composites, copies, calls, returns, element-wise arithmetic) and the
// mul-adds name each class's role. Two roles meeting in one class is an
// Error naming both instructions; a class no mul-add reaches (a matrix only
// loaded and stored) takes MatrixAccumulator, which every KHR operation
// the NV module could use accepts.
//
// Types are not classed: one NV type may carry values of several roles
// (khr_rewrite.cpp gives it one KHR type per role). Nor are constants
// (OpConstantComposite, OpConstantNull, OpUndef of a matrix type): each
// place a constant is used gets its own class, and a copy of the constant
// per role.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "spirv_module.hpp"

namespace spirv_khr {

enum class Use : uint8_t { MatrixA = 0, MatrixB = 1, Accumulator = 2 };
const char* use_name(Use u);

class UseInference {
 public:
  // Throws Error, naming the instruction, on what it cannot class.
  explicit UseInference(const Module& m);

  // Whether a type id holds a cooperative matrix (is one, or points to,
  // contains or returns one).
  bool carries(uint32_t type) const { return type < carrier_.size() && carrier_[type]; }
  // Whether an id is a matrix constant (classed per use, see above).
  bool is_matrix_constant(uint32_t id) const;
  // The role of a value that holds a matrix (not a constant).
  Use use_of_value(uint32_t id) const;
  // The role at operand `word` of instruction `inst` (an index into the
  // module's instructions): of the value there, or of that use of a constant.
  Use use_at(size_t inst, size_t word) const;
  // The instruction that defines an id (an index), if any.
  std::optional<size_t> definition(uint32_t id) const;

 private:
  struct Class {
    std::optional<Use> use;
    size_t set_by = 0;  // the instruction that named the role
  };
  size_t node_of_value(uint32_t id);
  size_t node_at(size_t inst, size_t word);
  size_t find(size_t n) const;
  void unite(size_t a, size_t b, size_t inst);
  void name_role(size_t n, Use u, size_t inst);
  void classify_types();
  void apply(size_t inst, uint32_t function);
  [[noreturn]] void refuse(size_t inst, const std::string& why) const;

  const Module& m_;
  std::vector<bool> carrier_;
  std::vector<size_t> def_;            // id -> instruction index + 1 (0: none)
  std::map<uint32_t, size_t> value_node_;
  std::map<std::pair<size_t, size_t>, size_t> site_node_;
  mutable std::vector<size_t> parent_;
  std::vector<Class> classes_;
  std::map<uint32_t, std::vector<uint32_t>> params_;  // function -> its parameter ids
};

}  // namespace spirv_khr
