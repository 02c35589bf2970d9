// The precision levels' names, apart from the plan: the settings reader
// (and its fuzz harness, scripts/fuzz.sh) needs them without the op
// registry and its kernels.
#include <cctype>

#include "vkamp/amp_level.hpp"

namespace vkamp {

const char* amp_level_name(AmpLevel level) {
  switch (level) {
    case AmpLevel::O0: return "O0";
    case AmpLevel::O1: return "O1";
    case AmpLevel::O2: return "O2";
    case AmpLevel::O3: return "O3";
  }
  return "?";
}

std::optional<AmpLevel> parse_amp_level(const std::string& text) {
  for (AmpLevel l : {AmpLevel::O0, AmpLevel::O1, AmpLevel::O2, AmpLevel::O3})
    if (text.size() == 2 && std::toupper(static_cast<unsigned char>(text[0])) == 'O' && text[1] == amp_level_name(l)[1])
      return l;
  return std::nullopt;
}

}  // namespace vkamp
