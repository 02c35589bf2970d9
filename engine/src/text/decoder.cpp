#include "decoder.hpp"

#include <memory>

#include "byte_level.hpp"
#include "normalizer.hpp"
#include "unicode.hpp"

namespace vkamp::text {
namespace {

// Bytes to text the way a lossy UTF-8 decoder gives it (U+FFFD for what
// is not UTF-8), as Hugging Face's decoders do.
std::string lossy(const std::string& bytes) { return encode_utf8(decode_utf8(bytes)); }

// The alphabet's code points back to their bytes; a character outside the
// alphabet stands for its own UTF-8.
std::string alphabet_to_bytes(const std::string& token) {
  std::string out;
  for (char32_t c : decode_utf8(token)) {
    if (const auto b = code_point_to_byte(c)) out += static_cast<char>(*b);
    else append_utf8(out, c);
  }
  return out;
}

DecodeStep byte_level(std::function<bool(const std::string&)> is_added) {
  return [is_added](std::vector<std::string>& tokens) {
    // Runs of ordinary tokens decode as one byte string (a character may
    // span tokens); an added token stands apart, as it is.
    std::vector<std::string> out;
    std::string bytes;
    bool open = false;
    for (const std::string& t : tokens) {
      if (is_added(t)) {
        if (open) out.push_back(lossy(bytes));
        bytes.clear();
        open = false;
        out.push_back(t);
      } else {
        bytes += alphabet_to_bytes(t);
        open = true;
      }
    }
    if (open) out.push_back(lossy(bytes));
    tokens = std::move(out);
  };
}

// "<0x41>" -> 0x41, or -1.
int byte_token(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  int v = 0;
  for (int k = 3; k < 5; ++k) {
    const char c = t[k];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

void byte_fallback(std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  std::string bytes;
  for (const std::string& t : tokens) {
    const int b = byte_token(t);
    if (b >= 0) {
      bytes += static_cast<char>(b);
      continue;
    }
    if (!bytes.empty()) out.push_back(lossy(bytes));
    bytes.clear();
    out.push_back(t);
  }
  if (!bytes.empty()) out.push_back(lossy(bytes));
  tokens = std::move(out);
}

DecodeStep strip(const json& j, const Where& w) {
  const std::u32string content = decode_utf8(string_or(j, "content", " ", w));
  if (content.size() != 1) w.at("content").fail("expected one character");
  const int64_t start = integer_or(j, "start", 0, w), stop = integer_or(j, "stop", 0, w);
  if (start < 0 || stop < 0) w.fail("expected start and stop of at least 0");
  return [=](std::vector<std::string>& tokens) {
    for (std::string& t : tokens) {
      std::u32string s = decode_utf8(t);
      std::size_t a = 0, b = s.size();
      while (a < static_cast<std::size_t>(start) && a < b && s[a] == content[0]) ++a;
      for (int64_t k = 0; k < stop && b > a && s[b - 1] == content[0]; ++k) --b;
      t = encode_utf8(std::u32string_view(s).substr(a, b - a));
    }
  };
}

void add_steps(const json& j, const Where& w, std::function<bool(const std::string&)> is_added,
               std::vector<DecodeStep>& steps) {
  const std::string type = component_type(j, w);
  if (type == "Sequence") {
    const json& list = array_member(j, "decoders", w);
    for (std::size_t i = 0; i < list.size(); ++i) add_steps(list[i], w.at("decoders").at(i), is_added, steps);
  } else if (type == "ByteLevel") {
    steps.push_back(byte_level(is_added));
  } else if (type == "Replace") {
    auto pattern = pattern_of(member(j, "pattern", w), w.at("pattern"));
    const std::u32string content = decode_utf8(string_or(j, "content", "", w));
    steps.push_back([pattern, content](std::vector<std::string>& tokens) {
      for (std::string& t : tokens) t = encode_utf8(replace_all(*pattern, decode_utf8(t), content));
    });
  } else if (type == "ByteFallback") {
    steps.push_back(byte_fallback);
  } else if (type == "Fuse") {
    steps.push_back([](std::vector<std::string>& tokens) {
      std::string all;
      for (const std::string& t : tokens) all += t;
      tokens = {all};
    });
  } else if (type == "Strip") {
    steps.push_back(strip(j, w));
  } else if (type == "Metaspace") {
    const std::u32string replacement = decode_utf8(string_or(j, "replacement", "\xE2\x96\x81", w));
    auto pattern = std::make_shared<PretokenizePattern>(PretokenizePattern::literal(replacement));
    steps.push_back([pattern](std::vector<std::string>& tokens) {
      for (std::size_t i = 0; i < tokens.size(); ++i) {
        std::u32string s = replace_all(*pattern, decode_utf8(tokens[i]), U" ");
        if (i == 0 && !s.empty() && s[0] == U' ') s.erase(0, 1);  // the space the pre-tokenizer prepended
        tokens[i] = encode_utf8(s);
      }
    });
  } else {
    unsupported(w, "decoder", type, "Sequence, ByteLevel, Replace, ByteFallback, Fuse, Strip and Metaspace");
  }
}

}  // namespace

std::vector<DecodeStep> decoder_steps(const json& j, const Where& w,
                                      std::function<bool(const std::string&)> is_added) {
  std::vector<DecodeStep> steps;
  if (!j.is_null()) add_steps(j, w, is_added, steps);
  return steps;
}

}  // namespace vkamp::text
