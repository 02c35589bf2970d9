// config.json of a Hugging Face Llama-family model, with transformers'
// defaults for the fields a file may leave out (LlamaConfig's,
// MistralConfig's and Qwen2Config's).
#include <filesystem>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>

#include "vkamp/config_error.hpp"
#include "vkamp/models/hf_checkpoint.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::models {

namespace {

using Json = nlohmann::json;

struct Fields {
  const Json& j;
  std::string file;

  [[noreturn]] void fail(const std::string& what) const { throw ConfigError(file + ": " + what); }
  bool has(const char* key) const { return j.contains(key) && !j[key].is_null(); }
  uint32_t count(const char* key, std::optional<uint32_t> fallback = std::nullopt) const {
    if (!has(key)) {
      if (fallback) return *fallback;
      fail(std::string("\"") + key + "\" is missing");
    }
    if (!j[key].is_number_unsigned() || j[key].get<uint64_t>() > 0xFFFFFFFFull)
      fail(std::string("\"") + key + "\" is not a count: " + j[key].dump());
    return j[key].get<uint32_t>();
  }
  double number(const Json& o, const char* key, std::optional<double> fallback, const std::string& where) const {
    if (!o.contains(key) || o[key].is_null()) {
      if (fallback) return *fallback;
      fail(where + "\"" + key + "\" is missing");
    }
    if (!o[key].is_number()) fail(where + "\"" + key + "\" is not a number: " + o[key].dump());
    return o[key].get<double>();
  }
  bool flag(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!j[key].is_boolean()) fail(std::string("\"") + key + "\" is not true or false: " + j[key].dump());
    return j[key].get<bool>();
  }
};

std::string supported_list() {
  std::string s;
  for (const char* a : kHfArchitectures) s += (s.empty() ? "" : ", ") + std::string(a);
  return s;
}

void read_rope_scaling(const Fields& f, LlamaConfig& c) {
  if (!f.has("rope_scaling")) return;
  const Json& r = f.j["rope_scaling"];
  if (!r.is_object()) f.fail("\"rope_scaling\" is not an object: " + r.dump());
  const char* type_key = r.contains("rope_type") ? "rope_type" : "type";
  const std::string type = r.contains(type_key) && r[type_key].is_string() ? r[type_key].get<std::string>() : "";
  if (type == "default") return;
  if (type != "llama3")
    f.fail("rope_scaling of type '" + type + "' is not supported (vkamp implements \"llama3\" and none)");
  const std::string where = "rope_scaling: ";
  c.rope.factor = f.number(r, "factor", std::nullopt, where);
  c.rope.low_freq_factor = f.number(r, "low_freq_factor", std::nullopt, where);
  c.rope.high_freq_factor = f.number(r, "high_freq_factor", std::nullopt, where);
  const double original = f.number(r, "original_max_position_embeddings", std::nullopt, where);
  if (!(c.rope.factor > 0) || !(c.rope.high_freq_factor > c.rope.low_freq_factor) || !(original >= 1))
    f.fail("rope_scaling needs factor > 0, high_freq_factor > low_freq_factor and original_max_position_embeddings >= 1");
  c.rope.original_max_positions = uint32_t(original);
}

}  // namespace

LlamaConfig read_hf_config(const std::string& dir) {
  const std::filesystem::path path = platform::path_from_utf8(dir) / "config.json";
  const std::string file = platform::utf8_from_path(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(file + ": cannot open (is " + dir + " a Hugging Face model folder?)");
  Json j;
  try {
    j = Json::parse(in);
  } catch (const Json::exception& e) {
    throw ConfigError(file + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw ConfigError(file + ": not a JSON object");
  const Fields f{j, file};

  LlamaConfig c;
  if (!f.has("architectures") || !j["architectures"].is_array() || j["architectures"].size() != 1 ||
      !j["architectures"][0].is_string())
    f.fail("\"architectures\" must list one architecture (supported: " + supported_list() + ")");
  c.architecture = j["architectures"][0].get<std::string>();
  bool known = false;
  for (const char* a : kHfArchitectures) known = known || c.architecture == a;
  if (!known) f.fail("architecture " + c.architecture + " is not supported (supported: " + supported_list() + ")");
  const bool qwen2 = c.architecture == "Qwen2ForCausalLM";

  if (f.has("hidden_act") && j["hidden_act"] != "silu")
    f.fail("hidden_act " + j["hidden_act"].dump() + " is not supported (the Llama family's is \"silu\")");
  if (f.flag("mlp_bias", false)) f.fail("mlp_bias true is not supported (no Llama-family checkpoint sets it)");
  c.vocab_size = f.count("vocab_size");
  c.hidden_size = f.count("hidden_size");
  c.intermediate_size = f.count("intermediate_size");
  c.num_hidden_layers = f.count("num_hidden_layers");
  c.num_attention_heads = f.count("num_attention_heads");
  c.num_key_value_heads = f.count("num_key_value_heads", c.num_attention_heads);
  c.head_dim = f.count("head_dim", 0);
  c.max_position_embeddings = f.count("max_position_embeddings", qwen2 ? 32768 : 2048);
  c.rms_norm_eps = f.number(j, "rms_norm_eps", 1e-6, "");
  c.rope.theta = f.number(j, "rope_theta", 10000, "");
  read_rope_scaling(f, c);
  c.tie_word_embeddings = f.flag("tie_word_embeddings", false);
  // Qwen2's q, k and v always have biases; Llama's and Mistral's only with attention_bias.
  c.attention_bias = qwen2 || f.flag("attention_bias", false);
  c.initializer_range = f.number(j, "initializer_range", 0.02, "");
  // Mistral's: a window wider than the run's sequences changes nothing.
  if (f.flag("use_sliding_window", c.architecture == "MistralForCausalLM")) c.sliding_window = f.count("sliding_window", 0);
  return c;
}

void check_tokenizer_fits(const LlamaConfig& c, size_t tokenizer_ids, const std::string& dir) {
  if (tokenizer_ids <= c.vocab_size) return;  // a larger vocab_size pads (Qwen2's 151,936 rows for 151,665 ids)
  const std::string slash = dir.empty() || dir.back() == '/' ? "" : "/";
  throw ConfigError(dir + slash + "config.json: vocab_size " + std::to_string(c.vocab_size) + " is below the " +
                    std::to_string(tokenizer_ids) + " ids of " + dir + slash +
                    "tokenizer.json: model.embed_tokens.weight [" + std::to_string(c.vocab_size) + ", " +
                    std::to_string(c.hidden_size) + "] has no row for ids " + std::to_string(c.vocab_size) + " to " +
                    std::to_string(tokenizer_ids - 1));
}

}  // namespace vkamp::models
