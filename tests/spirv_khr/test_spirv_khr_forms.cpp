// The pass on forms.comp as glslang 12 compiles it (the build writes
// forms.h): the GL_NV_cooperative_matrix forms a kernel can take, through
// functions, arrays, conditionals, construction, .length() and conversion.
// Roles below were read off the GLSL by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>

#include "forms.h"
#include "khr_check.hpp"
#include "khr_rewrite.hpp"

namespace spirv_khr::test {
namespace {

class Forms : public ::testing::Test {
 protected:
  void SetUp() override {
    khr_ = nv_to_khr(parse(std::span<const uint32_t>(spirv_khr_forms)));
    check_khr_module(khr_);
  }
  const Instruction& def(uint32_t id) const {
    for (const Instruction& in : khr_.instructions)
      if (in.has_result() && in.result() == id) return in;
    throw Error("%" + std::to_string(id) + " not defined");
  }
  // The Use of a value's KHR matrix type, through pointers.
  uint32_t use_of_type(uint32_t type) const {
    const Instruction& t = def(type);
    if (t.opcode == op::TypePointer) return use_of_type(t.words[2]);
    if (t.opcode != op::TypeCooperativeMatrixKHR) throw Error("not a matrix type");
    return def(t.words[5]).words[2];
  }
  // The roles of the parameters of the function glslang names "<name>(...".
  std::vector<uint32_t> parameter_uses(const std::string& name) const {
    uint32_t fn = 0;
    for (const Instruction& in : khr_.instructions)
      if (in.opcode == op::Name && words_string(std::span(in.words).subspan(1)).rfind(name + "(", 0) == 0)
        fn = in.words[0];
    std::vector<uint32_t> uses;
    bool inside = false;
    for (const Instruction& in : khr_.instructions) {
      if (in.opcode == op::Function) inside = in.result() == fn;
      if (inside && in.opcode == op::FunctionParameter && def(in.type()).opcode == op::TypePointer &&
          (def(def(in.type()).words[2]).opcode == op::TypeCooperativeMatrixKHR))
        uses.push_back(use_of_type(in.type()));
    }
    return uses;
  }
  Module khr_;
};

TEST_F(Forms, FunctionParametersTakeTheirArgumentsRoles) {
  EXPECT_EQ(parameter_uses("madd"), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(parameter_uses("load_pair"), (std::vector<uint32_t>{0, 1})) << "out a is A, inout b is B";
  EXPECT_EQ(parameter_uses("scaled"), (std::vector<uint32_t>{2}));
}

TEST_F(Forms, TypesSplitByRole) {
  // fp16 as A and B, fp32 as the accumulator, int32 (converted to A) as A.
  std::vector<std::pair<uint32_t, uint32_t>> types;  // (component width and kind, use)
  for (const Instruction& in : khr_.instructions)
    if (in.opcode == op::TypeCooperativeMatrixKHR) {
      const Instruction& c = def(in.words[1]);
      types.push_back({c.words[1] + (c.opcode == op::TypeInt ? 1000u : 0u), use_of_type(in.result())});
    }
  std::sort(types.begin(), types.end());
  EXPECT_EQ(types, (std::vector<std::pair<uint32_t, uint32_t>>{{16, 0}, {16, 1}, {32, 2}, {1032, 0}}));
}

TEST_F(Forms, LengthIsTheAccumulatorsAndLoadsTakeTheirLayouts) {
  size_t lengths = 0, loads = 0, column_major = 0, chosen = 0;
  for (const Instruction& in : khr_.instructions) {
    if (in.opcode == op::SpecConstantOp && in.words[2] == op::CooperativeMatrixLengthKHR) {
      EXPECT_EQ(use_of_type(in.words[3]), 2u) << "c.length() of the fp32 accumulator";
      ++lengths;
    }
    EXPECT_NE(in.opcode == op::SpecConstantOp ? in.words[2] : 0u, uint32_t(op::CooperativeMatrixLengthNV));
    if (in.opcode == op::CooperativeMatrixLoadKHR) {
      ++loads;
      const Instruction& layout = def(in.words[3]);
      if (layout.opcode == op::SpecConstantOp) ++chosen;
      else column_major += layout.words[2];
    }
  }
  EXPECT_EQ(lengths, 1u);
  EXPECT_EQ(loads, 3u);
  EXPECT_EQ(column_major, 1u) << "the integers are column-major, a from tile[] row-major";
  EXPECT_EQ(chosen, 1u) << "b's layout is TRANS != 0u, a specialization constant";
}

TEST_F(Forms, SecondRunWritesTheSameWords) {
  EXPECT_EQ(serialize(nv_to_khr(parse(std::span<const uint32_t>(spirv_khr_forms)))), serialize(khr_));
}

}  // namespace
}  // namespace spirv_khr::test
