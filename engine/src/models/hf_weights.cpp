// A Hugging Face folder's safetensors into the fp32 master layout, tensor
// by tensor, every name and shape checked against the graph.
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "vkamp/config_error.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/models/hf_checkpoint.hpp"
#include "vkamp/platform.hpp"
#include "vkamp/platform/files.hpp"

namespace vkamp::models {

namespace {

namespace fs = std::filesystem;

std::string dims_text(const std::vector<uint64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

// The folder's safetensors files, headers only: model.safetensors, or the
// shards model.safetensors.index.json's weight_map names.
std::vector<io::TensorDirectory> read_directories(const fs::path& dir) {
  const fs::path single = dir / "model.safetensors", index = dir / "model.safetensors.index.json";
  std::vector<io::TensorDirectory> files;
  try {
    if (fs::exists(index)) {
      std::ifstream in(index, std::ios::binary);
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(in);
      } catch (const nlohmann::json::exception& e) {
        throw ConfigError(platform::utf8_from_path(index) + ": not valid JSON: " + e.what());
      }
      if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
        throw ConfigError(platform::utf8_from_path(index) + ": no \"weight_map\" object");
      std::map<std::string, bool> shards;
      for (const auto& [name, file] : j["weight_map"].items()) {
        if (!file.is_string() || file.get<std::string>().find_first_of("/\\") != std::string::npos)
          throw ConfigError(platform::utf8_from_path(index) + ": weight_map entry '" + name + "' is not a file name in the folder");
        shards[file.get<std::string>()] = true;
      }
      for (const auto& [file, unused] : shards) files.push_back(io::read_safetensors_header(platform::utf8_from_path(dir / platform::path_from_utf8(file))));
    } else if (fs::exists(single)) {
      files.push_back(io::read_safetensors_header(platform::utf8_from_path(single)));
    } else {
      throw ConfigError(platform::utf8_from_path(dir) + ": neither model.safetensors nor model.safetensors.index.json is there");
    }
  } catch (const io::FormatError& e) {
    throw ConfigError(e.what());
  }
  return files;
}

// Tensors a checkpoint may carry that the graph does not: rotary tables
// older exports saved, and a tied lm_head written out anyway.
bool ignorable(const std::string& name, const graph::Graph& g) {
  const std::string inv_freq = "rotary_emb.inv_freq";
  if (name.size() >= inv_freq.size() && name.compare(name.size() - inv_freq.size(), inv_freq.size(), inv_freq) == 0)
    return true;
  return name == "lm_head.weight" && !g.has_tensor(name);
}

}  // namespace

bool is_lora_adapter(const std::string& name) {
  return name.find(".lora_A.") != std::string::npos || name.find(".lora_B.") != std::string::npos;
}

void load_hf_weights(const std::string& dir, const graph::Graph& g, const TensorSink& put) {
  std::string name;
  std::vector<float> whole;
  auto flush = [&] {
    if (!name.empty()) put(name, std::move(whole));
    whole.clear();
  };
  load_hf_weight_slices(dir, g, [&](const std::string& n, uint64_t first, std::vector<float>&& v) {
    if (n != name || first == 0) {
      flush();
      name = n;
    }
    whole.insert(whole.end(), v.begin(), v.end());
  });
  flush();
}

uint64_t load_hf_weight_slices(const std::string& dir_utf8, const graph::Graph& g, const TensorSliceSink& put) {
  const fs::path dir = platform::path_from_utf8(dir_utf8);
  const std::vector<io::TensorDirectory> files = read_directories(dir);
  uint64_t read = 0;
  std::map<std::string, std::pair<const io::TensorDirectory*, const io::TensorEntry*>> found;
  for (const io::TensorDirectory& f : files)
    for (const io::TensorEntry& e : f.entries) {
      if (found.count(e.name)) throw ConfigError(f.path + ": tensor '" + e.name + "' is also in " + found[e.name].first->path);
      found[e.name] = {&f, &e};
    }
  // Before the shapes config.json implies, so that the message says the two
  // disagree (and a tied model's lm_head, written anyway, is checked too).
  const auto embed = found.find("model.embed_tokens.weight"), head = found.find("lm_head.weight");
  if (embed != found.end() && head != found.end()) {
    const std::vector<uint64_t>& e = embed->second.second->shape;
    const std::vector<uint64_t>& h = head->second.second->shape;
    if (!e.empty() && !h.empty() && e[0] != h[0])
      throw ConfigError(head->second.first->path + ": the embedding and lm_head disagree on the vocabulary: " +
                        "model.embed_tokens.weight is " + dims_text(e) + " but lm_head.weight is " + dims_text(h));
  }
  for (const auto& [name, where] : found)
    if ((!g.has_tensor(name) || is_lora_adapter(name)) && !ignorable(name, g))
      throw ConfigError(where.first->path + ": tensor '" + name + "' is not a parameter of " + g.origin() +
                        " as config.json describes it");
  for (const graph::Tensor& t : g.tensors()) {
    if ((t.kind != graph::TensorKind::Param && t.kind != graph::TensorKind::Frozen) || is_lora_adapter(t.name)) continue;
    const std::vector<uint64_t> want(t.dims.begin(), t.dims.end());
    auto it = found.find(t.name);
    if (it == found.end())
      throw ConfigError(platform::utf8_from_path(dir) + ": tensor '" + t.name + "' " + dims_text(want) + " is missing from the safetensors");
    const auto [file, entry] = it->second;
    if (entry->shape != want)
      throw ConfigError(file->path + ": tensor '" + t.name + "' is " + dims_text(entry->shape) + " but config.json implies " +
                        dims_text(want));
    const uint64_t eb = io::dtype_bytes(entry->dtype), slice = kLoadSliceBytes / eb * eb;
    try {
      for (uint64_t from = 0; from < entry->bytes; from += slice) {
        const uint64_t n = std::min(slice, entry->bytes - from);
        put(t.name, from / eb, io::to_floats(entry->dtype, file->read(*entry, from, n), file->path + ": tensor '" + t.name + "'"));
      }
    } catch (const io::FormatError& e) {
      throw ConfigError(e.what());
    }
    read += entry->bytes;
  }
  return read;
}

void write_hf_folder(const std::string& dir_utf8, const std::string& base_utf8, const graph::Graph& g, io::DType dtype,
                     const std::function<std::vector<float>(const std::string& name)>& values) {
  const fs::path dir = platform::path_from_utf8(dir_utf8), base = platform::path_from_utf8(base_utf8);
  if (fs::exists(dir) && fs::equivalent(dir, base)) throw ConfigError(dir_utf8 + ": is the base model's own folder");
  fs::create_directories(dir);
  io::TensorFile f;
  f.metadata["format"] = "pt";
  const Format fmt = dtype == io::DType::F16 ? Format::F16 : dtype == io::DType::BF16 ? Format::BF16 : Format::F32;
  for (int i : g.param_indices()) {
    const graph::Tensor& t = g.tensors()[i];
    const std::vector<float> v = values(t.name);
    f.tensors.push_back({t.name, dtype, std::vector<uint64_t>(t.dims.begin(), t.dims.end()), pack(fmt, v)});
  }
  io::write_safetensors(platform::utf8_from_path(dir / "model.safetensors"), f);
  for (const char* name : {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
                           "special_tokens_map.json", "tokenizer.model", "chat_template.jinja"}) {
    if (!fs::exists(base / name)) continue;
    try {  // copied through the platform's atomic replace, as every file vkamp writes
      platform::InputFile in(platform::utf8_from_path(base / name));
      platform::ReplacingFile out(platform::utf8_from_path(dir / name));
      char chunk[1 << 16];
      for (size_t n; (n = in.read(chunk, sizeof chunk)) > 0;) out.write(chunk, n);
      out.commit();
    } catch (const platform::FileError& e) {
      throw ConfigError(e.what());
    }
  }
}

}  // namespace vkamp::models
