// Reads tokenizer.json and tokenizer_config.json into a Tokenizer::Impl,
// refusing by name what vkamp does not implement.
#include <limits>
#include <stdexcept>

#include "tokenizer_impl.hpp"
#include "unicode.hpp"

namespace vkamp::text {
namespace {

int32_t token_id(const json& j, const Where& w) {
  if (!j.is_number_integer() || j.get<int64_t>() < 0 || j.get<int64_t>() > std::numeric_limits<int32_t>::max())
    w.fail(std::string("expected a token id (an integer from 0), found ") + j.dump());
  return static_cast<int32_t>(j.get<int64_t>());
}

std::unique_ptr<Bpe> read_bpe(const json& m, const Where& w) {
  expect_object(m, w);
  const std::string type = string_or(m, "type", "", w);
  if (type != "BPE")
    w.at("type").fail(type.empty() ? "missing (vkamp reads the model type BPE)"
                                   : "the model \"" + type + "\" is not supported by vkamp (it reads BPE)");
  if (optional_member(m, "dropout")) w.at("dropout").fail("BPE dropout is not supported by vkamp (it is random)");
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (!string_or(m, affix, "", w).empty()) w.at(affix).fail("a non-empty affix is not supported by vkamp");
  std::unordered_map<std::string, int32_t> vocab;
  const json& v = member(m, "vocab", w);
  expect_object(v, w.at("vocab"));
  vocab.reserve(v.size());
  for (auto it = v.begin(); it != v.end(); ++it) vocab.emplace(it.key(), token_id(it.value(), w.at("vocab").at(it.key())));
  std::vector<std::pair<std::string, std::string>> merges;
  const json& list = array_member(m, "merges", w);
  merges.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    if (e.is_string()) {
      const std::string s = e.get<std::string>();
      const std::size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
        w.at("merges").at(i).fail("expected \"LEFT RIGHT\" (one space), found \"" + s + "\"");
      merges.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
      merges.emplace_back(e[0].get<std::string>(), e[1].get<std::string>());
    } else {
      w.at("merges").at(i).fail("expected \"LEFT RIGHT\" or [\"LEFT\", \"RIGHT\"], found " + e.dump());
    }
  }
  BpeOptions o;
  if (const json* unk = optional_member(m, "unk_token")) o.unk_token = as_string(*unk, w.at("unk_token"));
  o.byte_fallback = bool_or(m, "byte_fallback", false, w);
  o.fuse_unk = bool_or(m, "fuse_unk", false, w);
  o.ignore_merges = bool_or(m, "ignore_merges", false, w);
  try {
    return std::make_unique<Bpe>(std::move(vocab), std::move(merges), o);
  } catch (const std::invalid_argument& e) {
    w.fail(e.what());
  }
}

void read_added_tokens(Tokenizer::Impl& impl, const json& t, const Where& w) {
  const json* list = optional_member(t, "added_tokens");
  if (!list) return;
  if (!list->is_array()) w.at("added_tokens").fail("expected an array");
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& e = (*list)[i];
    const Where at = w.at("added_tokens").at(i);
    AddedToken a;
    a.id = token_id(member(e, "id", at), at.at("id"));
    a.content = decode_utf8(string_member(e, "content", at));
    a.special = bool_or(e, "special", false, at);
    a.lstrip = bool_or(e, "lstrip", false, at);
    a.rstrip = bool_or(e, "rstrip", false, at);
    a.normalized = bool_or(e, "normalized", !a.special, at);
    if (bool_or(e, "single_word", false, at))
      at.at("single_word").fail("added tokens matched as single words only are not supported by vkamp");
    if (a.content.empty()) at.at("content").fail("expected a non-empty token");
    impl.added.push_back(std::move(a));
  }
}

// The template's parts for one text: "SpecialToken" ids and the text ("Sequence" A).
std::vector<TemplatePart> read_template(const json& p, const Where& w) {
  std::vector<TemplatePart> parts;
  const json& single = array_member(p, "single", w);
  const json& specials = member(p, "special_tokens", w);
  for (std::size_t i = 0; i < single.size(); ++i) {
    const Where at = w.at("single").at(i);
    if (const json* s = optional_member(single[i], "SpecialToken")) {
      const std::string name = string_member(*s, "id", at.at("SpecialToken"));
      const Where sw = w.at("special_tokens").at(name);
      const json& ids = array_member(member(specials, name, w.at("special_tokens")), "ids", sw);
      TemplatePart part;
      for (std::size_t k = 0; k < ids.size(); ++k) part.special_ids.push_back(token_id(ids[k], sw.at("ids").at(k)));
      if (part.special_ids.empty()) sw.at("ids").fail("expected at least one id");
      parts.push_back(std::move(part));
    } else if (const json* s = optional_member(single[i], "Sequence")) {
      if (string_member(*s, "id", at.at("Sequence")) != "A") at.fail("expected the sequence A in a single template");
      parts.push_back({});
    } else {
      at.fail("expected {\"SpecialToken\": ...} or {\"Sequence\": ...}");
    }
  }
  return parts;
}

void read_post_processor(Tokenizer::Impl& impl, const json& p, const Where& w) {
  if (p.is_null()) return;
  const std::string type = component_type(p, w);
  if (type == "ByteLevel") return;  // only offsets change
  if (type == "TemplateProcessing") {
    impl.single_template = read_template(p, w);
  } else if (type == "Sequence") {
    const json& list = array_member(p, "processors", w);
    for (std::size_t i = 0; i < list.size(); ++i) read_post_processor(impl, list[i], w.at("processors").at(i));
  } else {
    unsupported(w, "post-processor", type, "TemplateProcessing, ByteLevel and Sequence");
  }
}

// tokenizer_config.json's bos_token / eos_token: a string, null, or an
// object with "content" (older files); the id of that token.
std::optional<int32_t> config_token(const Tokenizer::Impl& impl, const json& config, const char* key, const Where& w) {
  const json* j = optional_member(config, key);
  if (!j) return std::nullopt;
  const std::string content = j->is_object() ? string_member(*j, "content", w.at(key)) : as_string(*j, w.at(key));
  if (const auto it = impl.added_ids.find(content); it != impl.added_ids.end()) return it->second;
  if (const auto id = impl.model->id_of(content)) return id;
  w.at(key).fail("the token \"" + content + "\" is neither an added token nor in the vocabulary");
}

}  // namespace

void load_tokenizer(Tokenizer::Impl& impl, const json& t, const json* config, const Where& file,
                    const Where& config_file) {
  expect_object(t, file);
  impl.model = read_bpe(member(t, "model", file), file.at("model"));
  read_added_tokens(impl, t, file);
  impl.normalizer = normalizer_steps(t.value("normalizer", json()), file.at("normalizer"));
  impl.pre_tokenizer = pre_tokenizer_steps(t.value("pre_tokenizer", json()), file.at("pre_tokenizer"));
  read_post_processor(impl, t.value("post_processor", json()), file.at("post_processor"));

  // Every id's token, for decode: the model's vocabulary, then the added tokens over it.
  std::size_t size = 0;
  for (const auto& [token, id] : impl.model->vocab()) size = std::max<std::size_t>(size, std::size_t(id) + 1);
  for (const AddedToken& a : impl.added) size = std::max<std::size_t>(size, std::size_t(a.id) + 1);
  impl.id_to_token.assign(size, std::string());
  impl.id_known.assign(size, false);
  impl.id_is_special.assign(size, false);
  for (const auto& [token, id] : impl.model->vocab()) impl.id_to_token[id] = token, impl.id_known[id] = true;
  for (const AddedToken& a : impl.added) {
    const std::string content = encode_utf8(a.content);
    impl.id_to_token[a.id] = content;
    impl.id_is_special[a.id] = a.special;
    impl.id_known[a.id] = true;
    impl.added_ids.emplace(content, a.id);
  }
  impl.has_decoder = !t.value("decoder", json()).is_null();
  const Tokenizer::Impl* self = &impl;
  impl.decoder = decoder_steps(t.value("decoder", json()), file.at("decoder"),
                               [self](const std::string& s) { return self->added_ids.count(s) != 0; });

  // Added tokens with normalized true are found in the normalized text, so
  // their own content is normalized too.
  for (AddedToken& a : impl.added)
    if (a.normalized)
      for (const TextStep& step : impl.normalizer) step(a.content);
  impl.raw_splitter = std::make_unique<AddedTokenSplitter>(impl.added, false);
  impl.normalized_splitter = std::make_unique<AddedTokenSplitter>(impl.added, true);

  if (!config) return;
  expect_object(*config, config_file);
  impl.clean_up_spaces = bool_or(*config, "clean_up_tokenization_spaces", true, config_file);
  impl.bos = config_token(impl, *config, "bos_token", config_file);
  impl.eos = config_token(impl, *config, "eos_token", config_file);
  // add_bos_token / add_eos_token rebuild the template, as transformers'
  // Llama tokenizer does: [BOS] text [EOS].
  const json* add_bos = optional_member(*config, "add_bos_token");
  const json* add_eos = optional_member(*config, "add_eos_token");
  if (add_bos || add_eos) {
    const bool bos = bool_or(*config, "add_bos_token", false, config_file);
    const bool eos = bool_or(*config, "add_eos_token", false, config_file);
    if (bos && !impl.bos) config_file.at("add_bos_token").fail("true, but there is no bos_token");
    if (eos && !impl.eos) config_file.at("add_eos_token").fail("true, but there is no eos_token");
    impl.single_template.clear();
    if (bos) impl.single_template.push_back({{*impl.bos}});
    impl.single_template.push_back({});
    if (eos) impl.single_template.push_back({{*impl.eos}});
  }
}

}  // namespace vkamp::text
