// The studio's words for a setting are the command line's: a control is
// labelled with the setting's flag, and its tooltip is the --help line of
// that flag, read from the settings table (training_settings()), so the
// two never drift apart.
#pragma once
#include <string>

namespace vkamp::ui {

// "--steps-per-increase" for "steps_per_increase" (the key or an alias);
// throws vkamp::Error for a key the table does not have.
std::string setting_label(const std::string& key);

// "--steps-per-increase N: clean steps before the scale grows
//  (settings file: steps_per_increase, also growth_interval)"
std::string setting_tooltip(const std::string& key);

}  // namespace vkamp::ui
