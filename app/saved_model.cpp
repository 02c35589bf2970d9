#include "app/saved_model.hpp"

#include <nlohmann/json.hpp>

namespace vkamp::app {
namespace {

const std::string& need(const io::TensorFile& f, const std::string& key, const std::string& path) {
  auto it = f.metadata.find(key);
  if (it == f.metadata.end())
    throw io::FormatError(path + ": no \"" + key +
                          "\" in the metadata (not a file vkamp-train wrote; fashion_mlp and lenet5 files "
                          "have no classes either)");
  return it->second;
}

}  // namespace

std::map<std::string, std::string> metadata_of(const SavedModel& m) {
  std::map<std::string, std::string> out{{"vkamp.model", m.model}, {"vkamp.task", m.regress ? "regress" : "classify"}};
  if (!m.regress) out["vkamp.classes"] = nlohmann::json(m.classes).dump();
  if (m.standardizer) out["vkamp.standardize"] = m.standardizer->to_json();
  if (m.target_standardizer) out["vkamp.standardize_target"] = m.target_standardizer->to_json();
  if (!m.features.empty()) out["vkamp.features"] = nlohmann::json(m.features).dump();
  if (!m.label.empty()) out["vkamp.label"] = m.label;
  if (!m.targets.empty()) out["vkamp.targets"] = nlohmann::json(m.targets).dump();
  return out;
}

// An optional JSON list of strings.
std::vector<std::string> string_list(const io::TensorFile& f, const std::string& key, const std::string& path) {
  std::vector<std::string> out;
  auto it = f.metadata.find(key);
  if (it == f.metadata.end()) return out;
  const nlohmann::json list = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  if (!list.is_array()) throw io::FormatError(path + ": " + key + " is not a JSON list: " + it->second);
  for (const auto& c : list) {
    if (!c.is_string()) throw io::FormatError(path + ": " + key + " holds a non-string: " + c.dump());
    out.push_back(c.get<std::string>());
  }
  return out;
}

// An optional standardization.
std::optional<data::Standardizer> standardizer(const io::TensorFile& f, const std::string& key,
                                               const std::string& path) {
  auto it = f.metadata.find(key);
  if (it == f.metadata.end()) return std::nullopt;
  try {
    return data::Standardizer::from_json(it->second);
  } catch (const std::exception& e) {
    throw io::FormatError(path + ": " + key + ": " + e.what());
  }
}

SavedModel read_saved_model(const io::TensorFile& file, const std::string& path) {
  SavedModel m;
  m.model = need(file, "vkamp.model", path);
  const std::string& task = need(file, "vkamp.task", path);
  if (task != "classify" && task != "regress")
    throw io::FormatError(path + ": vkamp.task is \"" + task + "\", expected classify or regress");
  m.regress = task == "regress";
  if (!m.regress) {
    need(file, "vkamp.classes", path);
    m.classes = string_list(file, "vkamp.classes", path);
    if (m.classes.empty()) throw io::FormatError(path + ": vkamp.classes is empty");
  }
  m.features = string_list(file, "vkamp.features", path);
  m.targets = string_list(file, "vkamp.targets", path);
  if (auto it = file.metadata.find("vkamp.label"); it != file.metadata.end()) m.label = it->second;
  m.standardizer = standardizer(file, "vkamp.standardize", path);
  m.target_standardizer = standardizer(file, "vkamp.standardize_target", path);
  if (m.target_standardizer && !m.regress)
    throw io::FormatError(path + ": vkamp.standardize_target is for regression targets, but vkamp.task is classify");
  return m;
}

}  // namespace vkamp::app
