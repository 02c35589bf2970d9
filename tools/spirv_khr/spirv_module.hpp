// A SPIR-V module as words: its header and its instructions, each with the
// operand layout the grammar gives (which words are result type, result id,
// and ids). Enough of SPIR-V for a pass that rewrites types and opcodes; it
// refuses, naming them, the instructions whose layout it does not know.
#pragma once
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace spirv_khr {

// Everything the pass refuses: the message names the instruction.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The opcodes and enumerants the pass reads or writes (SPIRV-Headers'
// spirv.core.grammar.json; Debian 12 packages no spirv.hpp).
namespace op {
enum : uint16_t {
  Undef = 1, SourceExtension = 4, Name = 5, MemberName = 6, Extension = 10, MemoryModel = 14, EntryPoint = 15,
  Capability = 17, TypeVoid = 19, TypeBool = 20, TypeInt = 21, TypeFloat = 22, TypeVector = 23, TypeArray = 28,
  TypeRuntimeArray = 29, TypeStruct = 30, TypePointer = 32, TypeFunction = 33, TypeForwardPointer = 39,
  ConstantTrue = 41, ConstantFalse = 42, Constant = 43, ConstantComposite = 44, ConstantNull = 46,
  SpecConstantTrue = 48, SpecConstantFalse = 49, SpecConstant = 50, SpecConstantComposite = 51,
  SpecConstantOp = 52, Function = 54, FunctionParameter = 55, FunctionEnd = 56, FunctionCall = 57,
  Variable = 59, Load = 61, Store = 62, CopyMemory = 63, AccessChain = 65, InBoundsAccessChain = 66,
  PtrAccessChain = 67, Decorate = 71, MemberDecorate = 72, DecorationGroup = 73, GroupDecorate = 74,
  GroupMemberDecorate = 75, CompositeConstruct = 80, CompositeExtract = 81, CompositeInsert = 82,
  CopyObject = 83, ConvertFToU = 109, ConvertFToS = 110, ConvertSToF = 111, ConvertUToF = 112, UConvert = 113,
  SConvert = 114, FConvert = 115, Bitcast = 124, SNegate = 126, FNegate = 127, IAdd = 128, FAdd = 129,
  ISub = 130, FSub = 131, IMul = 132, FMul = 133, UDiv = 134, SDiv = 135, FDiv = 136, MatrixTimesScalar = 143,
  Select = 169, Phi = 245, Label = 248, ReturnValue = 254, DecorateId = 332, CopyLogical = 400,
  DecorateString = 5632, MemberDecorateString = 5633,
  TypeCooperativeMatrixKHR = 4456, CooperativeMatrixLoadKHR = 4457, CooperativeMatrixStoreKHR = 4458,
  CooperativeMatrixMulAddKHR = 4459, CooperativeMatrixLengthKHR = 4460,
  TypeCooperativeMatrixNV = 5358, CooperativeMatrixLoadNV = 5359, CooperativeMatrixStoreNV = 5360,
  CooperativeMatrixMulAddNV = 5361, CooperativeMatrixLengthNV = 5362,
};
}  // namespace op
constexpr uint32_t kCapabilityCooperativeMatrixNV = 5357, kCapabilityCooperativeMatrixKHR = 6022;
constexpr uint32_t kMagic = 0x07230203;

// The operand layout of an opcode (opcode_table.inc, from the grammar).
struct OpInfo {
  uint16_t opcode;
  const char* name;
  bool has_type, has_result;
  int8_t lead_ids;  // operands after type/result that are ids (-1: all of them)
  bool tail_ids;    // after those, one literal word, then only ids
};
// Null for an opcode the table does not hold.
const OpInfo* op_info(uint32_t opcode);
// "OpFAdd", or "opcode 1234" for one the table does not hold.
std::string op_name(uint32_t opcode);
// OpName, OpDecorate and their kin: they name an id (their first operand)
// but carry no value.
bool is_annotation(uint32_t opcode);

struct Instruction {
  uint16_t opcode = 0;
  std::vector<uint32_t> words;  // the operands, without the opcode/word-count word

  bool has_type() const;
  bool has_result() const;
  uint32_t type() const { return has_type() ? words[0] : 0; }
  uint32_t result() const { return has_result() ? words[has_type() ? 1 : 0] : 0; }
  // Where the operands after result type and result id begin in `words`.
  size_t first_operand() const { return size_t(has_type()) + size_t(has_result()); }
  // Indices into `words` of every id operand (result type and result id
  // excluded); throws Error for an opcode whose layout is unknown.
  std::vector<size_t> id_operands() const;
  // "OpFAdd %12" (the result id, where there is one): how errors name it.
  std::string describe() const;
};

struct Module {
  uint32_t header[5] = {};  // magic, version, generator, id bound, schema
  std::vector<Instruction> instructions;

  uint32_t bound() const { return header[3]; }
};

// Throws Error on a truncated or malformed stream.
Module parse(std::span<const uint32_t> words);
std::vector<uint32_t> serialize(const Module& module);

// A literal string operand as SPIR-V stores it: UTF-8, nul-terminated,
// padded to whole words; and back.
std::vector<uint32_t> string_words(const std::string& s);
std::string words_string(std::span<const uint32_t> words);

}  // namespace spirv_khr
