// The SPV_NV -> SPV_KHR cooperative-matrix pass (tools/spirv_khr) on small
// hand-written modules whose expected output was worked out by hand from
// the two extensions' grammar, on the forms the kernels use, and on every
// .coopmat shader the build embeds. No validator on this toolchain knows
// SPV_KHR_cooperative_matrix (spirv-val 2023.1), so each output also goes
// through check_khr_module: ids defined before use, types unique, Uses and
// layouts well-formed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "khr_check.hpp"
#include "khr_rewrite.hpp"
#include "spirv_asm.hpp"
#include "vkamp/shader_registry.hpp"

namespace spirv_khr::test {
namespace {

Module translate(const Asm& a) {
  Module out = nv_to_khr(parse(a.words()));
  check_khr_module(out);
  return out;
}

std::vector<const Instruction*> all(const Module& m, uint16_t opcode) {
  std::vector<const Instruction*> r;
  for (const Instruction& in : m.instructions)
    if (in.opcode == opcode) r.push_back(&in);
  return r;
}

const Instruction& def(const Module& m, uint32_t id) {
  for (const Instruction& in : m.instructions)
    if (in.has_result() && in.result() == id) return in;
  throw Error("%" + std::to_string(id) + " not defined");
}

uint32_t constant_value(const Module& m, uint32_t id) {
  const Instruction& c = def(m, id);
  EXPECT_EQ(c.opcode, op::Constant);
  return c.words.at(2);
}

// The Use of a KHR matrix type, of a value's type, of a pointer's pointee.
uint32_t use_of_type(const Module& m, uint32_t type) {
  const Instruction& t = def(m, type);
  if (t.opcode == op::TypePointer) return use_of_type(m, t.words[2]);
  if (t.opcode == op::TypeArray) return use_of_type(m, t.words[1]);
  EXPECT_EQ(t.opcode, op::TypeCooperativeMatrixKHR);
  return constant_value(m, t.words.at(5));
}
uint32_t use_of_value(const Module& m, uint32_t id) { return use_of_type(m, def(m, id).type()); }

bool has_string(const Module& m, uint16_t opcode, const std::string& s) {
  for (const Instruction* in : all(m, opcode))
    if (words_string(in->words) == s) return true;
  return false;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A = load fp16 row-major, B = load fp16 column-major (one NV type, two
// roles), C = load fp32; D = A x B + C stored: the kernel's whole path.
TEST(SpirvKhr, TranslatesLoadMulAddStoreByHand) {
  Common k;
  k.header();
  k.types();
  k.matrix_types();
  k.shared_arrays();
  k.begin_main();
  const uint32_t x = k.load(k.mh, true, k.f), y = k.load(k.mh, true, k.t), acc = k.load(k.mf, false, k.f);
  const uint32_t d = k.mul_add(x, y, acc);
  k.store(d);
  k.end_function();
  const std::vector<uint32_t> in = k.a.words();
  const Module m = translate(k.a);

  EXPECT_EQ(all(m, op::Capability).size(), 4u);
  EXPECT_EQ(all(m, op::Capability)[3]->words, std::vector<uint32_t>{kCapabilityCooperativeMatrixKHR});
  EXPECT_TRUE(has_string(m, op::Extension, "SPV_KHR_cooperative_matrix"));
  EXPECT_FALSE(has_string(m, op::Extension, "SPV_NV_cooperative_matrix"));
  // New ids, numbered as the pass meets the types: mh keeps its id as
  // MatrixA (Use 0: the module's c0), its MatrixB twin is next, then the
  // constant 1 its Use needs; mf keeps its id as MatrixAccumulator, Use 2.
  ASSERT_EQ(m.bound(), in[3] + 3);
  const uint32_t mh_b = in[3], one = in[3] + 1, two = in[3] + 2;
  EXPECT_EQ(def(m, one).words, (std::vector<uint32_t>{k.uint_t, one, 1}));
  EXPECT_EQ(def(m, two).words, (std::vector<uint32_t>{k.uint_t, two, 2}));
  const auto types = all(m, op::TypeCooperativeMatrixKHR);
  ASSERT_EQ(types.size(), 3u);
  EXPECT_EQ(types[0]->words, (std::vector<uint32_t>{k.mh, k.half, k.c3, k.c16, k.c16, k.c0}));
  EXPECT_EQ(types[1]->words, (std::vector<uint32_t>{mh_b, k.half, k.c3, k.c16, k.c16, one}));
  EXPECT_EQ(types[2]->words, (std::vector<uint32_t>{k.mf, k.flt, k.c3, k.c16, k.c16, two}));
  // <Pointer, Stride, ColumnMajor> became <Pointer, MemoryLayout, Stride>.
  const auto loads = all(m, op::CooperativeMatrixLoadKHR);
  ASSERT_EQ(loads.size(), 3u);
  EXPECT_EQ(loads[0]->words, (std::vector<uint32_t>{k.mh, x, loads[0]->words[2], k.c0, k.c16}));
  EXPECT_EQ(loads[1]->words, (std::vector<uint32_t>{mh_b, y, loads[1]->words[2], one, k.c16}));
  EXPECT_EQ(loads[2]->words, (std::vector<uint32_t>{k.mf, acc, loads[2]->words[2], k.c0, k.c16}));
  const auto mads = all(m, op::CooperativeMatrixMulAddKHR);
  ASSERT_EQ(mads.size(), 1u);
  EXPECT_EQ(mads[0]->words, (std::vector<uint32_t>{k.mf, d, x, y, acc}));  // float: no operands mask
  const auto stores = all(m, op::CooperativeMatrixStoreKHR);
  ASSERT_EQ(stores.size(), 1u);
  EXPECT_EQ(stores[0]->words, (std::vector<uint32_t>{stores[0]->words[0], d, k.c0, k.c16}));
  // The new constants come before the first matrix type, which needs them.
  const auto first_type = std::find_if(m.instructions.begin(), m.instructions.end(),
                                       [](const Instruction& i) { return i.opcode == op::TypeCooperativeMatrixKHR; });
  EXPECT_EQ((first_type - 2)->words, def(m, one).words);
  EXPECT_EQ((first_type - 1)->words, def(m, two).words);
}


// mh serves as A through one variable and as B through another: its
// pointer type splits with it, each variable takes its role's pointer, and
// names and decorations of the split types are copied to each twin.
TEST(SpirvKhr, SplitsOneNvTypeServingTwoUsesThroughVariables) {
  Common k;
  k.header();
  k.a.str(op::Name, {k.mh}, "fragment");
  k.a.op(op::Decorate, {k.p_fn_mh, 0 /* RelaxedPrecision */});
  k.types();
  k.matrix_types();
  k.shared_arrays();
  k.begin_main();
  const uint32_t va = k.a.id(), vb = k.a.id(), vc = k.a.id();
  k.a.op(op::Variable, {k.p_fn_mh, va, kFunctionStorage});
  k.a.op(op::Variable, {k.p_fn_mh, vb, kFunctionStorage});
  k.a.op(op::Variable, {k.p_fn_mf, vc, kFunctionStorage});
  k.a.op(op::Store, {va, k.load(k.mh, true, k.f)});
  k.a.op(op::Store, {vb, k.load(k.mh, true, k.f)});
  k.a.op(op::Store, {vc, k.load(k.mf, false, k.f)});
  const uint32_t x = k.a.id(), y = k.a.id(), acc = k.a.id();
  k.a.op(op::Load, {k.mh, x, va});
  k.a.op(op::Load, {k.mh, y, vb});
  k.a.op(op::Load, {k.mf, acc, vc});
  k.store(k.mul_add(x, y, acc));
  k.end_function();
  const Module m = translate(k.a);

  EXPECT_EQ(use_of_value(m, va), 0u);
  EXPECT_EQ(use_of_value(m, vb), 1u);
  EXPECT_EQ(use_of_value(m, vc), 2u);
  EXPECT_NE(def(m, va).type(), def(m, vb).type());
  EXPECT_EQ(use_of_value(m, x), 0u);
  EXPECT_EQ(use_of_value(m, y), 1u);
  // The loads that fed the variables took the variables' roles.
  const auto loads = all(m, op::CooperativeMatrixLoadKHR);
  ASSERT_EQ(loads.size(), 3u);
  EXPECT_EQ(use_of_type(m, loads[0]->type()), 0u);
  EXPECT_EQ(use_of_type(m, loads[1]->type()), 1u);
  EXPECT_EQ(all(m, op::TypeCooperativeMatrixKHR).size(), 3u);
  size_t names = 0, decorations = 0;
  for (const Instruction* n : all(m, op::Name)) names += words_string(std::span(n->words).subspan(1)) == "fragment";
  for (const Instruction* d : all(m, op::Decorate)) decorations += def(m, d->words[0]).opcode == op::TypePointer;
  EXPECT_EQ(names, 2u) << "one OpName per KHR twin of mh";
  EXPECT_EQ(decorations, 2u) << "one OpDecorate per twin of mh's pointer";
}

// The accumulator's role reaches values only through OpPhi, OpSelect,
// OpCopyObject, OpFNegate and OpMatrixTimesScalar; an fp32 matrix becomes A
// through OpFConvert, so mf serves two roles too.
TEST(SpirvKhr, PropagatesThroughPhiSelectCopiesArithmeticAndConversions) {
  Common k;
  k.header();
  k.types();
  k.matrix_types();
  k.shared_arrays();
  k.begin_main();
  const uint32_t wide = k.load(k.mf, false, k.f), x = k.a.id();
  k.a.op(op::FConvert, {k.mh, x, wide});
  const uint32_t y = k.load(k.mh, true, k.t), acc = k.load(k.mf, false, k.f);
  const uint32_t neg = k.a.id(), scaled = k.a.id(), copy = k.a.id();
  k.a.op(op::FNegate, {k.mf, neg, acc});
  k.a.op(op::MatrixTimesScalar, {k.mf, scaled, neg, k.fzero});
  k.a.op(op::CopyObject, {k.mf, copy, scaled});
  const uint32_t l1 = k.a.id(), l2 = k.a.id(), l3 = k.a.id(), phi = k.a.id(), sel = k.a.id();
  k.a.op(247 /* OpSelectionMerge */, {l3, 0});
  k.a.op(250 /* OpBranchConditional */, {k.t, l1, l2});
  k.a.op(op::Label, {l1});
  k.a.op(249 /* OpBranch */, {l3});
  k.a.op(op::Label, {l2});
  k.a.op(249, {l3});
  k.a.op(op::Label, {l3});
  k.a.op(op::Phi, {k.mf, phi, copy, l1, acc, l2});
  k.a.op(op::Select, {k.mf, sel, k.t, phi, copy});
  k.store(k.mul_add(x, y, sel));
  k.end_function();
  const Module m = translate(k.a);

  for (uint32_t v : {acc, neg, scaled, copy, phi, sel}) EXPECT_EQ(use_of_value(m, v), 2u) << "%" << v;
  EXPECT_EQ(use_of_value(m, wide), 0u) << "an fp32 matrix converted into A is A";
  EXPECT_EQ(use_of_value(m, x), 0u);
  EXPECT_EQ(all(m, op::TypeCooperativeMatrixKHR).size(), 4u) << "fp16 as A and B, fp32 as A and accumulator";
}

// The accumulators as the kernel holds them: a Private array of matrices
// reached through OpAccessChain; operands in a Function array built with
// OpCompositeConstruct, changed with OpCompositeInsert, read back with
// OpCompositeExtract.
TEST(SpirvKhr, PropagatesThroughArraysCompositesAndAccessChains) {
  Common k;
  k.header();
  k.types();
  k.matrix_types();
  const uint32_t c2 = k.a.id(), acc_arr = k.a.id(), p_priv_arr = k.a.id(), p_priv_mf = k.a.id();
  const uint32_t h_arr = k.a.id(), p_fn_h_arr = k.a.id();
  k.a.op(op::Constant, {k.uint_t, c2, 2});
  k.a.op(op::TypeArray, {acc_arr, k.mf, c2});
  k.a.op(op::TypePointer, {p_priv_arr, kPrivate, acc_arr});
  k.a.op(op::TypePointer, {p_priv_mf, kPrivate, k.mf});
  k.a.op(op::TypeArray, {h_arr, k.mh, c2});
  k.a.op(op::TypePointer, {p_fn_h_arr, kFunctionStorage, h_arr});
  k.shared_arrays();
  const uint32_t accs = k.a.id();
  k.a.op(op::Variable, {p_priv_arr, accs, kPrivate});
  k.begin_main();
  const uint32_t frags = k.a.id();
  k.a.op(op::Variable, {p_fn_h_arr, frags, kFunctionStorage});
  const uint32_t x0 = k.load(k.mh, true, k.f), x1 = k.load(k.mh, true, k.f), y = k.load(k.mh, true, k.f);
  const uint32_t built = k.a.id(), changed = k.a.id(), back = k.a.id(), x = k.a.id();
  k.a.op(op::CompositeConstruct, {h_arr, built, x0, x1});
  k.a.op(op::CompositeInsert, {h_arr, changed, x1, built, 0});
  k.a.op(op::Store, {frags, changed});
  k.a.op(op::Load, {h_arr, back, frags});
  k.a.op(op::CompositeExtract, {k.mh, x, back, 1});
  const uint32_t slot = k.a.id(), acc = k.a.id();
  k.a.op(op::AccessChain, {p_priv_mf, slot, accs, k.c0});
  k.a.op(op::Load, {k.mf, acc, slot});
  k.a.op(op::Store, {slot, k.mul_add(x, y, acc)});
  k.end_function();
  const Module m = translate(k.a);

  for (uint32_t v : {x0, x1, built, changed, back, x, frags}) EXPECT_EQ(use_of_value(m, v), 0u) << "%" << v;
  EXPECT_EQ(use_of_value(m, y), 1u);
  for (uint32_t v : {accs, slot, acc}) EXPECT_EQ(use_of_value(m, v), 2u) << "%" << v;
  EXPECT_EQ(def(m, def(m, accs).type()).opcode, op::TypePointer);
}

// A function taking A, B and C and returning A x B + C: its parameters take
// the roles of the arguments, its result the role of its OpReturnValue, and
// its function type points at the split types.
TEST(SpirvKhr, PropagatesThroughFunctionParametersAndReturns) {
  Common k;
  k.header();
  k.types();
  k.matrix_types();
  const uint32_t fn_t = k.a.id(), g = k.a.id();
  k.a.op(op::TypeFunction, {fn_t, k.mf, k.mh, k.mh, k.mf});
  k.shared_arrays();
  k.begin_main();
  const uint32_t x = k.load(k.mh, true, k.f), y = k.load(k.mh, true, k.f), acc = k.load(k.mf, false, k.f);
  const uint32_t d = k.a.id();
  k.a.op(op::FunctionCall, {k.mf, d, g, x, y, acc});
  k.store(d);
  k.end_function();
  const uint32_t pa = k.a.id(), pb = k.a.id(), pc = k.a.id();
  k.a.op(op::Function, {k.mf, g, 0, fn_t});
  k.a.op(op::FunctionParameter, {k.mh, pa});
  k.a.op(op::FunctionParameter, {k.mh, pb});
  k.a.op(op::FunctionParameter, {k.mf, pc});
  k.a.op(op::Label, {k.a.id()});
  k.a.op(op::ReturnValue, {k.mul_add(pa, pb, pc)});
  k.a.op(op::FunctionEnd, {});
  const Module m = translate(k.a);

  EXPECT_EQ(use_of_value(m, x), 0u);
  EXPECT_EQ(use_of_value(m, y), 1u);
  EXPECT_EQ(use_of_value(m, pb), 1u);
  EXPECT_EQ(use_of_value(m, d), 2u);
  const Instruction& type = def(m, def(m, g).words[3]);
  ASSERT_EQ(type.words.size(), 5u);
  EXPECT_EQ(use_of_type(m, type.words[1]), 2u);
  EXPECT_EQ(use_of_type(m, type.words[2]), 0u);
  EXPECT_EQ(use_of_type(m, type.words[3]), 1u);
  EXPECT_EQ(use_of_type(m, type.words[4]), 2u);
}

// One fp16 constant matrix used as A and as B, an OpConstantNull
// accumulator, an OpUndef stored as B: each constant is copied per role it
// is used in, and every use refers to its role's copy.
TEST(SpirvKhr, CopiesMatrixConstantsPerUse) {
  Common k;
  k.header();
  k.types();
  k.matrix_types();
  const uint32_t ones = k.a.id(), null_acc = k.a.id(), undef = k.a.id();
  k.a.op(op::ConstantComposite, {k.mh, ones, k.hzero});
  k.a.op(op::ConstantNull, {k.mf, null_acc});
  k.a.op(op::Undef, {k.mh, undef});
  k.shared_arrays();
  k.begin_main();
  const uint32_t vb = k.a.id(), y = k.a.id();
  k.a.op(op::Variable, {k.p_fn_mh, vb, kFunctionStorage});
  k.a.op(op::Store, {vb, undef});
  k.a.op(op::Load, {k.mh, y, vb});
  const uint32_t d1 = k.mul_add(ones, ones, null_acc);
  k.store(k.mul_add(ones, y, d1));
  k.end_function();
  const Module m = translate(k.a);

  const auto constants = all(m, op::ConstantComposite);
  ASSERT_EQ(constants.size(), 2u);
  EXPECT_EQ(use_of_type(m, constants[0]->type()), 0u);
  EXPECT_EQ(use_of_type(m, constants[1]->type()), 1u);
  const auto mads = all(m, op::CooperativeMatrixMulAddKHR);
  ASSERT_EQ(mads.size(), 2u);
  EXPECT_EQ(mads[0]->words[2], constants[0]->result());
  EXPECT_EQ(mads[0]->words[3], constants[1]->result());
  EXPECT_EQ(use_of_value(m, mads[0]->words[4]), 2u);
  EXPECT_EQ(mads[1]->words[2], constants[0]->result());
  ASSERT_EQ(all(m, op::Undef).size(), 1u);
  EXPECT_EQ(use_of_type(m, all(m, op::Undef)[0]->type()), 1u) << "only the B copy is used";
}

// NV takes signedness from the component types; KHR wants it said.
TEST(SpirvKhr, MarksSignedIntegerComponentsOnTheMulAdd) {
  Common k;
  k.header();
  k.types();
  const uint32_t s8 = k.a.id(), ms8 = k.a.id(), ms32 = k.a.id();
  k.a.op(op::TypeInt, {s8, 8, 1});
  k.a.op(op::TypeCooperativeMatrixNV, {ms8, s8, k.c3, k.c16, k.c16});
  k.a.op(op::TypeCooperativeMatrixNV, {ms32, k.int_t, k.c3, k.c16, k.c16});
  k.matrix_types();
  k.shared_arrays();
  k.begin_main();
  const uint32_t x = k.load(ms8, true, k.f), y = k.load(ms8, true, k.f), acc = k.load(ms32, false, k.f);
  const uint32_t d = k.a.id();
  k.a.op(op::CooperativeMatrixMulAddNV, {ms32, d, x, y, acc});
  k.store(d);
  k.end_function();
  const Module m = translate(k.a);
  const auto mads = all(m, op::CooperativeMatrixMulAddKHR);
  ASSERT_EQ(mads.size(), 1u);
  EXPECT_EQ(mads[0]->words, (std::vector<uint32_t>{mads[0]->type(), d, x, y, acc, 0xfu}));
}

TEST(SpirvKhr, LengthTakesTheKhrTypeOfItsOnlyRole) {
  Common k;
  k.header();
  k.types();
  k.matrix_types();
  k.shared_arrays();
  k.begin_main();
  const uint32_t x = k.load(k.mh, true, k.f), y = k.load(k.mh, true, k.f), acc = k.load(k.mf, false, k.f);
  k.store(k.mul_add(x, y, acc));
  const uint32_t n = k.a.id();
  k.a.op(op::CooperativeMatrixLengthNV, {k.uint_t, n, k.mf});
  k.end_function();
  const Module m = translate(k.a);
  ASSERT_EQ(all(m, op::CooperativeMatrixLengthKHR).size(), 1u);
  EXPECT_EQ(all(m, op::CooperativeMatrixLengthKHR)[0]->words, (std::vector<uint32_t>{k.uint_t, n, k.mf}));
}

// A ColumnMajor from a specialization constant (a kernel whose transposes
// are specialization constants): KHR's MemoryLayout becomes the
// specialization constant Select(flag, ColumnMajorKHR 1, RowMajorKHR 0),
// placed after the global constants.
TEST(SpirvKhr, SpecializationConstantColumnMajorSelectsTheLayout) {
  Common k;
  k.header();
  k.types();
  k.matrix_types();
  const uint32_t transposed = k.a.id();
  k.a.op(op::SpecConstantFalse, {k.bool_t, transposed});
  k.shared_arrays();
  k.begin_main();
  const uint32_t x = k.load(k.mh, true, transposed), y = k.load(k.mh, true, k.f), acc = k.load(k.mf, false, k.f);
  k.store(k.mul_add(x, y, acc));
  k.end_function();
  const Module m = translate(k.a);
  const auto loads = all(m, op::CooperativeMatrixLoadKHR);
  ASSERT_EQ(loads.size(), 3u);
  const Instruction& choice = def(m, loads[0]->words[3]);
  ASSERT_EQ(choice.opcode, op::SpecConstantOp);
  ASSERT_EQ(choice.words.size(), 6u);
  EXPECT_EQ(choice.words[0], k.uint_t);
  EXPECT_EQ(choice.words[2], uint32_t(op::Select));
  EXPECT_EQ(choice.words[3], transposed);
  EXPECT_EQ(constant_value(m, choice.words[4]), 1u);
  EXPECT_EQ(constant_value(m, choice.words[5]), 0u);
  EXPECT_EQ(loads[1]->words[3], k.c0) << "a plain false stays the constant RowMajorKHR";
}

// The pass refuses, naming the instruction, what it cannot translate.
TEST(SpirvKhr, RefusesWhatItCannotTranslate) {
  auto kernel = [](auto&& body) {
    Common k;
    k.header();
    k.types();
    k.matrix_types();
    const uint32_t spec_true = k.a.id();
    k.a.op(op::SpecConstantTrue, {k.bool_t, spec_true});
    k.shared_arrays();
    k.begin_main();
    const uint32_t x = k.load(k.mh, true, k.f), acc = k.load(k.mf, false, k.f);
    body(k, x, acc, spec_true);
    k.end_function();
    return error_of([&] { nv_to_khr(parse(k.a.words())); });
  };
  // One value as both A and B: KHR has no matrix of two roles.
  EXPECT_NE(kernel([](Common& k, uint32_t x, uint32_t acc, uint32_t) { k.store(k.mul_add(x, x, acc)); })
                .find("OpCooperativeMatrixMulAddNV"),
            std::string::npos);
  // A GLSL.std.450 function of a matrix.
  const std::string ext = kernel([](Common& k, uint32_t, uint32_t acc, uint32_t) {
    const uint32_t r = k.a.id();
    k.a.op(12 /* OpExtInst */, {k.mf, r, k.glsl, 4 /* FAbs */, acc});
  });
  EXPECT_EQ(ext.rfind("OpExtInst %", 0), 0u) << ext;
  // A ColumnMajor computed at run time: KHR's MemoryLayout must be a constant.
  const std::string runtime = kernel([](Common& k, uint32_t, uint32_t acc, uint32_t) {
    const uint32_t flag = k.a.id();
    k.a.op(170 /* OpIEqual */, {k.bool_t, flag, k.c16, k.c3});
    k.a.op(op::CooperativeMatrixStoreNV, {k.element(false), acc, k.c16, flag});
  });
  EXPECT_NE(runtime.find("OpCooperativeMatrixStoreNV"), std::string::npos) << runtime;
  EXPECT_NE(runtime.find("ColumnMajor"), std::string::npos) << runtime;
  // An opcode this pass does not know, matrix or not.
  const std::string unknown = kernel([](Common& k, uint32_t, uint32_t, uint32_t) { k.a.op(4999, {}); });
  EXPECT_NE(unknown.find("opcode 4999"), std::string::npos) << unknown;
  // The length of a type that serves two roles.
  const std::string length = kernel([](Common& k, uint32_t x, uint32_t acc, uint32_t) {
    k.store(k.mul_add(x, k.load(k.mh, true, k.f), acc));
    k.a.op(op::CooperativeMatrixLengthNV, {k.uint_t, k.a.id(), k.mh});
  });
  EXPECT_NE(length.find("OpCooperativeMatrixLengthNV"), std::string::npos) << length;
  // No NV capability: nothing to translate.
  Common plain;
  plain.a.op(op::Capability, {kShader});
  EXPECT_NE(error_of([&] { nv_to_khr(parse(plain.a.words())); }).find("CooperativeMatrixNV"), std::string::npos);
}

// The structural check can fail: a module broken three ways after translation.
TEST(SpirvKhr, StructureCheckCatchesBrokenModules) {
  Common k;
  k.header();
  k.types();
  k.matrix_types();
  k.shared_arrays();
  k.begin_main();
  const uint32_t x = k.load(k.mh, true, k.f), y = k.load(k.mh, true, k.f), acc = k.load(k.mf, false, k.f);
  k.store(k.mul_add(x, y, acc));
  k.end_function();
  const Module good = translate(k.a);

  Module swapped = good;
  for (Instruction& in : swapped.instructions)
    if (in.opcode == op::CooperativeMatrixMulAddKHR) std::swap(in.words[2], in.words[3]);
  EXPECT_NE(error_of([&] { check_khr_module(swapped); }).find("MatrixA"), std::string::npos);

  Module twice = good;
  auto first = std::find_if(twice.instructions.begin(), twice.instructions.end(),
                            [](const Instruction& i) { return i.opcode == op::TypeCooperativeMatrixKHR; });
  Instruction copy = *first;
  copy.words[0] = twice.header[3]++;
  twice.instructions.insert(first + 1, copy);
  EXPECT_NE(error_of([&] { check_khr_module(twice); }).find("the same type"), std::string::npos);

  // The constant 2 (the accumulator's Use, made by the pass just before
  // the first matrix type) moved after the types that name it.
  Module late = good;
  auto type = std::find_if(late.instructions.begin(), late.instructions.end(),
                           [](const Instruction& i) { return i.opcode == op::TypeCooperativeMatrixKHR; });
  auto function = std::find_if(late.instructions.begin(), late.instructions.end(),
                               [](const Instruction& i) { return i.opcode == op::Function; });
  ASSERT_EQ((type - 1)->opcode, op::Constant);
  std::rotate(type - 1, type, function);
  EXPECT_NE(error_of([&] { check_khr_module(late); }).find("before its definition"), std::string::npos);
}

// Every .coopmat shader the build embeds has its .khr twin, which is what
// the pass writes from it (the build ran the same library), passes the
// structural check, and comes out the same, word for word, when run again.
TEST(SpirvKhr, EveryEmbeddedCoopmatShaderHasItsKhrBuild) {
  auto find = [](const std::string& name) -> const vkamp::ShaderCode* {
    for (const vkamp::ShaderCode* s : vkamp::all_shaders())
      if (name == s->name) return s;
    return nullptr;
  };
  size_t pairs = 0;
  for (const vkamp::ShaderCode* s : vkamp::all_shaders()) {
    std::string name = s->name;
    const size_t at = name.rfind(".coopmat");
    if (at == std::string::npos || at + 8 != name.size()) continue;
    const vkamp::ShaderCode* khr = find(name.substr(0, at) + ".khr");
    ASSERT_NE(khr, nullptr) << name << " has no .khr build";
    const std::span<const uint32_t> nv(s->words, s->word_count), built(khr->words, khr->word_count);
    const std::vector<uint32_t> once = nv_to_khr(nv), again = nv_to_khr(nv);
    EXPECT_TRUE(std::equal(once.begin(), once.end(), built.begin(), built.end())) << name;
    EXPECT_EQ(once, again) << name;
    EXPECT_NO_THROW(check_khr_module(parse(built))) << name;
    ++pairs;
  }
  EXPECT_GE(pairs, 1u) << "no .coopmat shader embedded";
}

}  // namespace
}  // namespace spirv_khr::test
