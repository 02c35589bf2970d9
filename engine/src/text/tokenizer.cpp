// Encoding and decoding, in Hugging Face's order: added tokens out of the
// raw text, the normalizer, added tokens out of the normalized text, the
// pre-tokenizer, BPE, then the post-processor's template.
#include "vkamp/text/tokenizer.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tokenizer_impl.hpp"
#include "unicode.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::text {
namespace {

// The file's text, or nullopt where it does not exist (`required` false).
std::optional<std::string> read_text(const std::filesystem::path& path, const std::string& label, bool required) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (!required) return std::nullopt;
    throw TokenizerError(label + ": no such file (a Hugging Face model folder has tokenizer.json)");
  }
  if (std::filesystem::is_directory(path, ec)) throw TokenizerError(label + ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TokenizerError(label + ": cannot be opened");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

json parse(std::string_view text, const std::string& label) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    throw TokenizerError(label + ": not valid JSON (" + e.what() + ")");
  }
}

// transformers' clean_up_tokenization: no space before . ? ! , and the English contractions.
std::string clean_up(std::string s) {
  static const std::pair<const char*, const char*> kRules[] = {
      {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
      {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) {
    std::string out;
    const std::string f = from;
    for (std::size_t i = 0;;) {
      const std::size_t at = s.find(f, i);
      if (at == std::string::npos) {
        out.append(s, i, std::string::npos);
        break;
      }
      out.append(s, i, at - i);
      out += to;
      i = at + f.size();
    }
    s = std::move(out);
  }
  return s;
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::load(const std::string& folder) {
  const std::filesystem::path dir = platform::path_from_utf8(folder);
  const std::string slash = folder.empty() || folder.back() == '/' ? "" : "/";
  const std::string label = folder + slash + "tokenizer.json";
  const std::string config_label = folder + slash + "tokenizer_config.json";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw TokenizerError(folder + ": not a folder (expected a Hugging Face model folder with tokenizer.json)");
  const std::string tokenizer = *read_text(dir / "tokenizer.json", label, true);
  const std::optional<std::string> config = read_text(dir / "tokenizer_config.json", config_label, false);
  auto impl = std::make_unique<Impl>();
  impl->label = label;
  const json t = parse(tokenizer, label);
  const json c = config ? parse(*config, config_label) : json();
  load_tokenizer(*impl, t, config ? &c : nullptr, Where{label, ""}, Where{config_label, ""});
  return Tokenizer(std::move(impl));
}

Tokenizer Tokenizer::from_json(std::string_view tokenizer_json, std::string_view tokenizer_config_json,
                               const std::string& label) {
  auto impl = std::make_unique<Impl>();
  impl->label = label;
  const json t = parse(tokenizer_json, label);
  const json c = tokenizer_config_json.empty() ? json() : parse(tokenizer_config_json, label + " (config)");
  load_tokenizer(*impl, t, tokenizer_config_json.empty() ? nullptr : &c, Where{label, ""},
                 Where{label + " (config)", ""});
  return Tokenizer(std::move(impl));
}

std::vector<int32_t> Tokenizer::encode(std::string_view utf8, bool add_special) const {
  const Impl& m = *impl_;
  if (const std::size_t bad = first_invalid_utf8(utf8); bad != std::string_view::npos)
    throw TokenizerError("text to tokenize is not valid UTF-8 (byte " + std::to_string(bad) + " starts no character)");
  std::vector<int32_t> ids;
  const std::vector<Section> sections = m.raw_splitter->split(decode_utf8(utf8));
  for (std::size_t index = 0; index < sections.size(); ++index) {
    const Section& section = sections[index];
    if (section.text.empty()) continue;
    if (section.token >= 0) {
      ids.push_back(m.added[section.token].id);
      continue;
    }
    std::u32string text = section.text;
    for (const TextStep& step : m.normalizer) step(text);
    for (const Section& sub : m.normalized_splitter->split(text)) {
      if (sub.text.empty()) continue;
      if (sub.token >= 0) {
        ids.push_back(m.added[sub.token].id);
        continue;
      }
      std::vector<std::u32string> pieces{sub.text};
      for (const PieceStep& step : m.pre_tokenizer) step(pieces, index);
      for (const std::u32string& piece : pieces) m.model->encode(encode_utf8(piece), ids);
    }
  }
  if (!add_special || m.single_template.empty()) return ids;
  std::vector<int32_t> out;
  for (const TemplatePart& part : m.single_template) {
    const std::vector<int32_t>& add = part.is_text() ? ids : part.special_ids;
    out.insert(out.end(), add.begin(), add.end());
  }
  return out;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special) const {
  const Impl& m = *impl_;
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const int32_t id = ids[i];
    if (id < 0 || std::size_t(id) >= m.id_to_token.size() || !m.id_known[id])
      throw TokenizerError("token id " + std::to_string(id) + " (at " + std::to_string(i) + ") is not in " + m.label +
                           " (ids run from 0 to " + std::to_string(m.id_to_token.size()) + " exclusive)");
    if (skip_special && m.id_is_special[id]) continue;
    tokens.push_back(m.id_to_token[id]);
  }
  if (m.detokenize) return m.detokenize(ids, skip_special);
  std::string text;
  if (!m.has_decoder) {  // Hugging Face joins the tokens with spaces
    for (std::size_t i = 0; i < tokens.size(); ++i) text += (i ? " " : "") + tokens[i];
  } else {
    for (const DecodeStep& step : m.decoder) step(tokens);
    for (const std::string& t : tokens) text += t;
  }
  return m.clean_up_spaces ? clean_up(std::move(text)) : text;
}

std::optional<int32_t> Tokenizer::bos_id() const {
  if (impl_->bos) return impl_->bos;
  // No tokenizer_config.json: the special token the template starts with.
  const auto& t = impl_->single_template;
  if (!t.empty() && !t.front().is_text()) return t.front().special_ids.front();
  return std::nullopt;
}

std::optional<int32_t> Tokenizer::eos_id() const { return impl_->eos; }

std::size_t Tokenizer::vocab_size() const { return impl_->id_to_token.size(); }

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (const auto it = impl_->added_ids.find(std::string(token)); it != impl_->added_ids.end()) return it->second;
  return impl_->model->id_of(token);
}

}  // namespace vkamp::text
