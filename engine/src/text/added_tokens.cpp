#include "added_tokens.hpp"

#include "unicode.hpp"

namespace vkamp::text {

AddedTokenSplitter::AddedTokenSplitter(const std::vector<AddedToken>& tokens, bool normalized)
    : tokens_(tokens), trie_(1) {
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    if (tokens[t].normalized != normalized || tokens[t].content.empty()) continue;
    int node = 0;
    for (char32_t c : tokens[t].content) {
      auto it = trie_[node].next.find(c);
      if (it == trie_[node].next.end()) {
        trie_.push_back({});
        it = trie_[node].next.emplace(c, static_cast<int>(trie_.size() - 1)).first;
      }
      node = it->second;
    }
    if (trie_[node].token < 0) trie_[node].token = static_cast<int>(t);  // the first of equal contents wins
  }
}

std::vector<Section> AddedTokenSplitter::split(const std::u32string& text) const {
  std::vector<Section> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size();) {
    int node = 0, found = -1;
    std::size_t found_end = i;
    for (std::size_t j = i; j < text.size(); ++j) {
      const auto it = trie_[node].next.find(text[j]);
      if (it == trie_[node].next.end()) break;
      node = it->second;
      if (trie_[node].token >= 0) found = trie_[node].token, found_end = j + 1;
    }
    if (found < 0) {
      ++i;
      continue;
    }
    if (i > start) parts.push_back({text.substr(start, i - start), -1});
    parts.push_back({text.substr(i, found_end - i), found});
    i = start = found_end;
  }
  if (start < text.size()) parts.push_back({text.substr(start), -1});
  // lstrip: the whitespace before the token goes; rstrip: after it.
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (parts[k].token < 0) continue;
    const AddedToken& t = tokens_[parts[k].token];
    if (t.lstrip && k > 0 && parts[k - 1].token < 0) {
      std::u32string& s = parts[k - 1].text;
      while (!s.empty() && is_white_space(s.back())) s.pop_back();
    }
    if (t.rstrip && k + 1 < parts.size() && parts[k + 1].token < 0) {
      std::u32string& s = parts[k + 1].text;
      std::size_t n = 0;
      while (n < s.size() && is_white_space(s[n])) ++n;
      s.erase(0, n);
    }
  }
  return parts;
}

}  // namespace vkamp::text
