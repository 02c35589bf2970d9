// vkamp-info --knobs: every setting a run takes (the training rows and the
// application's, vkamp-train's and charlm's included) and every
// environment variable, each from its one table.
#pragma once
#include <string>

namespace vkamp::app {

// The settings by --help group: key, flag, what it does, default.
std::string settings_table();

// The environment variables (vkamp/knobs.hpp): name, values, default, purpose.
std::string env_knobs_table();

}  // namespace vkamp::app
