#include "spirv_module.hpp"

#include <algorithm>
#include <array>

namespace spirv_khr {
namespace {

constexpr OpInfo kTable[] = {
#include "opcode_table.inc"
};

// The layouts the generator cannot express: OpSource's optional string
// after an optional id, OpSwitch's literal/label pairs
// (labels are never matrices, so only the selector counts), OpEntryPoint's
// name string before its interface ids (which keep their numbers anyway);
// and the string decorations (an extension range the table leaves out).
constexpr OpInfo kByHand[] = {
    {3, "OpSource", false, false, 0, false},  // its optional file id is an OpString
    {251, "OpSwitch", false, false, 1, false},
    {15, "OpEntryPoint", false, false, 0, false},
    {5632, "OpDecorateString", false, false, 1, false},
    {5633, "OpMemberDecorateString", false, false, 1, false},
};

}  // namespace

const OpInfo* op_info(uint32_t opcode) {
  for (const OpInfo& i : kByHand)
    if (i.opcode == opcode) return &i;
  const OpInfo* it = std::lower_bound(std::begin(kTable), std::end(kTable), opcode,
                                      [](const OpInfo& i, uint32_t o) { return i.opcode < o; });
  return it != std::end(kTable) && it->opcode == opcode ? it : nullptr;
}

std::string op_name(uint32_t opcode) {
  const OpInfo* i = op_info(opcode);
  return i ? i->name : "opcode " + std::to_string(opcode);
}

bool is_annotation(uint32_t o) {
  return o == op::Name || o == op::MemberName || o == op::Decorate || o == op::MemberDecorate ||
         o == op::DecorateId || o == op::DecorateString || o == op::MemberDecorateString;
}

bool Instruction::has_type() const {
  const OpInfo* i = op_info(opcode);
  return i && i->has_type;
}

bool Instruction::has_result() const {
  const OpInfo* i = op_info(opcode);
  return i && i->has_result;
}

std::vector<size_t> Instruction::id_operands() const {
  const OpInfo* info = op_info(opcode);
  if (!info) throw Error(describe() + ": an instruction this pass does not know");
  std::vector<size_t> ids;
  const size_t first = first_operand();
  if (opcode == op::SpecConstantOp && words.size() > 2) {
    // The operands after the literal opcode are laid out as that opcode's
    // (OpCompositeExtract's indices are literals here too).
    Instruction inner{uint16_t(words[2]), {words[0], words[1]}};
    inner.words.insert(inner.words.end(), words.begin() + 3, words.end());
    for (size_t k : inner.id_operands()) ids.push_back(k + 1);
    return ids;
  }
  if (info->lead_ids < 0) {
    for (size_t w = first; w < words.size(); ++w) ids.push_back(w);
    return ids;
  }
  size_t w = first;
  for (int n = 0; n < info->lead_ids && w < words.size(); ++n) ids.push_back(w++);
  if (info->tail_ids)
    for (++w; w < words.size(); ++w) ids.push_back(w);
  return ids;
}

std::string Instruction::describe() const {
  std::string s = op_name(opcode);
  if (has_result() && words.size() >= first_operand()) s += " %" + std::to_string(result());
  return s;
}

Module parse(std::span<const uint32_t> words) {
  if (words.size() < 5 || words[0] != kMagic) throw Error("not a SPIR-V module (no magic number)");
  Module m;
  std::copy_n(words.begin(), 5, m.header);
  for (size_t at = 5; at < words.size();) {
    const uint32_t count = words[at] >> 16;
    Instruction inst;
    inst.opcode = uint16_t(words[at] & 0xffffu);
    if (count == 0 || at + count > words.size())
      throw Error(op_name(inst.opcode) + " at word " + std::to_string(at) + ": its word count runs past the module");
    inst.words.assign(words.begin() + std::ptrdiff_t(at) + 1, words.begin() + std::ptrdiff_t(at + count));
    if (inst.words.size() < inst.first_operand())
      throw Error(op_name(inst.opcode) + " at word " + std::to_string(at) + ": too short for its result");
    m.instructions.push_back(std::move(inst));
    at += count;
  }
  return m;
}

std::vector<uint32_t> serialize(const Module& module) {
  std::vector<uint32_t> out(std::begin(module.header), std::end(module.header));
  for (const Instruction& inst : module.instructions) {
    const size_t count = inst.words.size() + 1;
    if (count > 0xffff) throw Error(inst.describe() + ": more than 65535 words");
    out.push_back(uint32_t(count) << 16 | inst.opcode);
    out.insert(out.end(), inst.words.begin(), inst.words.end());
  }
  return out;
}

std::vector<uint32_t> string_words(const std::string& s) {
  std::vector<uint32_t> w(s.size() / 4 + 1, 0u);
  for (size_t i = 0; i < s.size(); ++i) w[i / 4] |= uint32_t(uint8_t(s[i])) << (8 * (i % 4));
  return w;
}

std::string words_string(std::span<const uint32_t> words) {
  std::string s;
  for (uint32_t w : words)
    for (int b = 0; b < 4; ++b) {
      const char c = char((w >> (8 * b)) & 0xffu);
      if (c == 0) return s;
      s += c;
    }
  return s;
}

}  // namespace spirv_khr
