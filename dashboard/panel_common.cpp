// What the panels share (panels.hpp).
#include "panels.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <optional>

namespace vkamp::ui {

void panel_title(const char* title, const char* detail) {
  ImGui::TextUnformatted(title);
  if (detail) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", detail);
  }
}

Axis step_axis(const app::RunHistory& h) {
  double last = h.step.empty() ? 1 : h.step.back() + 1;
  return {0, std::max(last, 10.0), false};
}

// Where tensor `name` sits in the run's underflow accounting, or -1.
int gradient_index(const app::RunHistory& h, const std::string& name) {
  const auto& names = h.gradients.tensors;
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : int(it - names.begin());
}

// The end of a name that fits `width`, after "..": the end of a tensor's
// name is what tells it from its neighbours (...attn.c_proj.weight).
std::string tail_that_fits(const std::string& name, float width) {
  if (ImGui::CalcTextSize(name.c_str()).x <= width) return name;
  for (size_t from = 1; from < name.size(); ++from) {
    std::string t = ".." + name.substr(from);
    if (ImGui::CalcTextSize(t.c_str()).x <= width) return t;
  }
  return "..";
}

}  // namespace vkamp::ui
