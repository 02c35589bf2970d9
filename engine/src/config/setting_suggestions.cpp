// "Did you mean": the known key closest to a misspelt one, or the key that
// another tool's name for the same knob stands for.
#include <algorithm>

#include "vkamp/config/setting.hpp"

namespace vkamp::config {
namespace {

// Names other tools use for the same knobs.
const std::pair<const char*, const char*> kForeignNames[] = {
    {"scale_window", "steps_per_increase"},
    {"loss_scale", "loss_scaling_factor"},
    {"init_scale", "initial_loss_scale"},
    {"max_grad_norm", "max_gradient_norm"},
    {"clip_grad_norm", "max_gradient_norm"},
    {"clip_grad_value", "max_gradient_value"},
    {"clip_value", "max_gradient_value"},
    {"clip_norm", "max_gradient_norm"},
    {"scale_factor", "growth_factor"},
    {"dtype", "precision"},
    {"num_epochs", "epochs"},
    {"micro_batches", "grad_accum"},
    {"gradient_accumulation_steps", "grad_accum"},
};

// Optimal string alignment distance (Levenshtein plus adjacent swaps).
size_t distance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(1, std::min(word.size() / 3, size_t(3))) + 1;  // accept < this
  for (const std::string& c : candidates) {
    size_t dd = distance(word, c);
    if (dd < best_d) {
      best_d = dd;
      best = c;
    }
  }
  return best;
}

std::string suggest_key(const std::string& unknown, const std::vector<std::string>& keys) {
  for (const auto& [from, to] : kForeignNames)
    if (unknown == from) return to;
  return closest_match(unknown, keys);
}

std::string suggest_key(const std::string& unknown) { return suggest_key(unknown, setting_keys()); }

std::string unknown_key_message(const std::string& key, const std::vector<std::string>& keys) {
  std::string msg = "unknown key '" + key + "'";
  std::string hint = suggest_key(key, keys);
  if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
  return msg;
}

}  // namespace vkamp::config
