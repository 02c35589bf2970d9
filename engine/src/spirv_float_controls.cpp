#include "vkamp/spirv_float_controls.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "vkamp/error.hpp"

namespace vkamp {
namespace {

// SPIR-V 1.6 spec, sections 2.3 (layout), 3.6, 3.31 and 3.52.
constexpr uint32_t kMagic = 0x07230203u;
constexpr uint32_t kHeaderWords = 5;
constexpr uint32_t kOpExtension = 10, kOpCapability = 17, kOpEntryPoint = 15, kOpExecutionMode = 16,
                   kOpExecutionModeId = 331;
constexpr uint32_t kCapabilityFloat16 = 9, kCapabilityPreserve = 4466, kModePreserve = 4461;
constexpr uint32_t kVersion14 = 0x00010400u;
constexpr std::string_view kExtension = "SPV_KHR_float_controls";

uint32_t opcode(uint32_t w) { return w & 0xFFFFu; }
uint32_t word_count(uint32_t w) { return w >> 16; }
uint32_t instruction(uint32_t op, uint32_t words) { return (words << 16) | op; }

// A literal string: UTF-8 bytes, NUL-terminated, padded to whole words.
std::vector<uint32_t> literal(std::string_view s) {
  std::vector<uint32_t> w(s.size() / 4 + 1, 0u);
  std::memcpy(w.data(), s.data(), s.size());
  return w;
}

struct Instruction {
  size_t at;  // first word
  uint32_t op, words;
};

std::vector<Instruction> instructions(std::span<const uint32_t> m) {
  if (m.size() < kHeaderWords || m[0] != kMagic) throw Error("not a SPIR-V module");
  std::vector<Instruction> out;
  for (size_t at = kHeaderWords; at < m.size();) {
    const uint32_t n = word_count(m[at]);
    if (n == 0 || at + n > m.size()) throw Error("malformed SPIR-V module (instruction at word " + std::to_string(at) + ")");
    out.push_back({at, opcode(m[at]), n});
    at += n;
  }
  return out;
}

}  // namespace

std::vector<uint32_t> inf_nan_preserve_widths(std::span<const uint32_t> m) {
  std::vector<uint32_t> widths;
  for (const Instruction& in : instructions(m))
    if (in.op == kOpExecutionMode && in.words == 4 && m[in.at + 2] == kModePreserve) widths.push_back(m[in.at + 3]);
  return widths;
}

std::vector<uint32_t> with_inf_nan_preserve(std::span<const uint32_t> m, FloatControlWidths widths) {
  const std::vector<Instruction> ins = instructions(m);
  bool float16 = false, has_capability = false, has_extension = false;
  size_t capabilities_end = kHeaderWords, extensions_end = 0, modes_end = 0;
  std::vector<uint32_t> entry_points;
  for (const Instruction& in : ins) {
    const size_t end = in.at + in.words;
    if (in.op == kOpCapability) {
      float16 = float16 || m[in.at + 1] == kCapabilityFloat16;
      has_capability = has_capability || m[in.at + 1] == kCapabilityPreserve;
      capabilities_end = end;
    } else if (in.op == kOpExtension) {
      const char* name = reinterpret_cast<const char*>(&m[in.at + 1]);
      has_extension = has_extension || std::string_view(name, strnlen(name, (in.words - 1) * 4)) == kExtension;
      extensions_end = end;
    } else if (in.op == kOpEntryPoint) {
      entry_points.push_back(m[in.at + 2]);
      modes_end = end;
    } else if (in.op == kOpExecutionMode || in.op == kOpExecutionModeId) {
      modes_end = end;
    }
  }
  if (entry_points.empty()) throw Error("SPIR-V module without an entry point");
  if (extensions_end == 0) extensions_end = capabilities_end;

  std::vector<uint32_t> want;
  if (widths.fp16 && float16) want.push_back(16);
  if (widths.fp32) want.push_back(32);
  const std::vector<uint32_t> have = inf_nan_preserve_widths(m);
  std::erase_if(want, [&](uint32_t w) { return std::find(have.begin(), have.end(), w) != have.end(); });
  if (want.empty()) return {m.begin(), m.end()};

  std::vector<uint32_t> capability, extension, modes;
  if (!has_capability) capability = {instruction(kOpCapability, 2), kCapabilityPreserve};
  if (!has_extension && m[1] < kVersion14) {
    const std::vector<uint32_t> name = literal(kExtension);
    extension.push_back(instruction(kOpExtension, uint32_t(name.size() + 1)));
    extension.insert(extension.end(), name.begin(), name.end());
  }
  for (uint32_t entry : entry_points)
    for (uint32_t w : want) modes.insert(modes.end(), {instruction(kOpExecutionMode, 4), entry, kModePreserve, w});

  // The sections keep their order: capabilities, extensions, ..., entry
  // points and execution modes.
  std::vector<uint32_t> out;
  out.reserve(m.size() + capability.size() + extension.size() + modes.size());
  auto copy = [&](size_t from, size_t to) { out.insert(out.end(), m.begin() + from, m.begin() + to); };
  copy(0, capabilities_end);
  out.insert(out.end(), capability.begin(), capability.end());
  copy(capabilities_end, extensions_end);
  out.insert(out.end(), extension.begin(), extension.end());
  copy(extensions_end, modes_end);
  out.insert(out.end(), modes.begin(), modes.end());
  copy(modes_end, m.size());
  return out;
}

}  // namespace vkamp
