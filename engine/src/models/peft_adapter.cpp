#include "vkamp/models/peft_adapter.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "vkamp/config_error.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/models/hf_checkpoint.hpp"
#include "vkamp/platform.hpp"
#include "vkamp/platform/files.hpp"

namespace vkamp::models {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr const char* kPrefix = "base_model.model.";

void write_text_atomically(const fs::path& path, const std::string& text) {
  try {
    platform::ReplacingFile out(platform::utf8_from_path(path));
    out.write(text.data(), text.size());
    out.commit();
  } catch (const platform::FileError& e) {
    throw ConfigError(e.what());
  }
}

std::vector<const graph::Tensor*> adapters_of(const graph::Graph& g) {
  std::vector<const graph::Tensor*> out;
  for (int i : g.param_indices())
    if (is_lora_adapter(g.tensors()[i].name)) out.push_back(&g.tensors()[i]);
  return out;
}

}  // namespace

std::string peft_name(const std::string& adapter) { return kPrefix + adapter; }

void fold_adapter(std::vector<float>& w, const std::vector<float>& a, const std::vector<float>& b, const LoraConfig& lora) {
  const size_t r = lora.rank, in = r ? a.size() / r : 0, out = r ? b.size() / r : 0;
  if (!r || w.size() != out * in || a.size() != r * in) throw ConfigError("fold_adapter: shapes that do not fit");
  const double scale = lora.alpha / double(r);
  for (size_t o = 0; o < out; ++o)
    for (size_t i = 0; i < in; ++i) {
      double sum = 0;
      for (size_t k = 0; k < r; ++k) sum += double(b[o * r + k]) * a[k * in + i];
      w[o * in + i] = float(w[o * in + i] + scale * sum);
    }
}

void write_peft_adapter(const std::string& dir_utf8, const graph::Graph& g, const LoraConfig& lora,
                        const std::string& base_model,
                        const std::function<std::vector<float>(const std::string& name)>& values) {
  const fs::path dir = platform::path_from_utf8(dir_utf8);
  fs::create_directories(dir);
  io::TensorFile file;
  file.metadata["format"] = "pt";  // what PEFT's save_pretrained writes
  for (const graph::Tensor* t : adapters_of(g)) {
    const std::vector<float> v = values(t->name);
    io::Tensor out{peft_name(t->name), io::DType::F32, std::vector<uint64_t>(t->dims.begin(), t->dims.end()), {}};
    out.data.resize(v.size() * sizeof(float));
    std::memcpy(out.data.data(), v.data(), out.data.size());
    file.tensors.push_back(std::move(out));
  }
  if (file.tensors.empty()) throw ConfigError("write_peft_adapter: the model has no LoRA adapters");
  io::write_safetensors(platform::utf8_from_path(dir / "adapter_model.safetensors"), file);
  Json c;
  c["peft_type"] = "LORA";
  c["task_type"] = "CAUSAL_LM";
  c["base_model_name_or_path"] = base_model;
  c["r"] = lora.rank;
  c["lora_alpha"] = lora.alpha;
  c["lora_dropout"] = lora.dropout;
  c["target_modules"] = lora.targets;
  c["bias"] = "none";
  c["fan_in_fan_out"] = false;
  c["inference_mode"] = true;
  c["init_lora_weights"] = true;
  c["modules_to_save"] = nullptr;
  c["use_rslora"] = false;
  c["use_dora"] = false;
  write_text_atomically(dir / "adapter_config.json", c.dump(2) + "\n");
}

LoraConfig read_peft_config(const std::string& dir) {
  const fs::path path = platform::path_from_utf8(dir) / "adapter_config.json";
  const std::string file = platform::utf8_from_path(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(file + ": cannot open (is " + dir + " a PEFT adapter folder?)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(file + ": not valid JSON: " + e.what());
  }
  auto fail = [&](const std::string& what) { throw ConfigError(file + ": " + what); };
  if (!j.is_object()) fail("not a JSON object");
  if (j.value("peft_type", "") != "LORA") fail("peft_type is not \"LORA\"");
  if (!j.contains("r") || !j["r"].is_number_unsigned() || j["r"].get<uint64_t>() == 0) fail("\"r\" is not a rank above 0");
  if (!j.contains("lora_alpha") || !j["lora_alpha"].is_number()) fail("\"lora_alpha\" is not a number");
  if (j.value("use_dora", false) || j.value("use_rslora", false)) fail("DoRA and rsLoRA adapters are not supported");
  if (j.contains("bias") && j["bias"] != "none") fail("bias " + j["bias"].dump() + " is not supported (only \"none\")");
  LoraConfig c;
  c.rank = j["r"].get<uint32_t>();
  c.alpha = j["lora_alpha"].get<double>();
  if (j.contains("lora_dropout") && j["lora_dropout"].is_number()) c.dropout = j["lora_dropout"].get<double>();
  c.targets.clear();
  if (!j.contains("target_modules") || !j["target_modules"].is_array()) fail("\"target_modules\" is not a list");
  for (const auto& t : j["target_modules"]) {
    if (!t.is_string()) fail("\"target_modules\" holds " + t.dump());
    c.targets.push_back(t.get<std::string>());
  }
  return c;
}

void load_peft_adapter(const std::string& dir, const graph::Graph& g,
                       const std::function<void(const std::string& name, std::vector<float>&& values)>& put) {
  const std::string path = platform::utf8_from_path(platform::path_from_utf8(dir) / "adapter_model.safetensors");
  try {
    const io::TensorDirectory d = io::read_safetensors_header(path);
    const std::vector<const graph::Tensor*> adapters = adapters_of(g);
    for (const io::TensorEntry& e : d.entries) {
      bool known = false;
      for (const graph::Tensor* t : adapters) known = known || peft_name(t->name) == e.name;
      if (!known) throw ConfigError(path + ": tensor '" + e.name + "' is not an adapter of this model and config");
    }
    for (const graph::Tensor* t : adapters) {
      const io::TensorEntry* e = d.find(peft_name(t->name));
      const std::vector<uint64_t> want(t->dims.begin(), t->dims.end());
      if (!e) throw ConfigError(path + ": tensor '" + peft_name(t->name) + "' is missing");
      if (e->shape != want) throw ConfigError(path + ": tensor '" + e->name + "' has the wrong shape for r and the model");
      put(t->name, io::to_floats(e->dtype, d.read(*e), path + ": tensor '" + e->name + "'"));
    }
  } catch (const io::FormatError& e) {
    throw ConfigError(e.what());
  }
}

}  // namespace vkamp::models
