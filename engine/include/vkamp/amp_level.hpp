// Precision levels: the names a run's settings use (MindSpore's amp_level
// names; Cerebras's precision_opt_level maps onto them, see docs/config.md).
// Core, below config/ and graph/: the settings read a level, the graph's
// precision plan (graph/precision_plan.hpp) says what each level runs in.
#pragma once
#include <optional>
#include <string>

namespace vkamp {

enum class AmpLevel { O0, O1, O2, O3 };

const char* amp_level_name(AmpLevel level);  // "O2"
// "O0".."O3", case-insensitive; nullopt otherwise.
std::optional<AmpLevel> parse_amp_level(const std::string& text);

}  // namespace vkamp
