// Reading embedded SPIR-V in tests: how many instructions with opcode `op`
// carry `operand` as their word `operand_index` (1 = the first operand).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace vkamp::test {

inline size_t count_instructions(std::span<const uint32_t> m, uint32_t op, uint32_t operand_index, uint32_t operand) {
  size_t n = 0;
  for (size_t at = 5; at < m.size() && (m[at] >> 16) != 0; at += m[at] >> 16)
    if ((m[at] & 0xFFFF) == op && (m[at] >> 16) > operand_index && m[at + operand_index] == operand) ++n;
  return n;
}

}  // namespace vkamp::test
