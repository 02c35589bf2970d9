#include "added_tokens.hpp"

#include <algorithm>

#include "unicode.hpp"

namespace vkamp::text {

AddedTokenSplitter::AddedTokenSplitter(const std::vector<AddedToken>& tokens, bool normalized, SplitOrder order)
    : tokens_(tokens), trie_(1), order_(order) {
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    if (tokens[t].normalized != normalized || tokens[t].content.empty()) continue;
    by_length_.push_back(static_cast<int>(t));
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
  // llama.cpp sorts by UTF-8 length (its std::sort leaves ties unordered; here the list's order).
  std::stable_sort(by_length_.begin(), by_length_.end(), [&](int a, int b) {
    return encode_utf8(tokens[a].content).size() > encode_utf8(tokens[b].content).size();
  });
}

bool AddedTokenSplitter::strips(char32_t c) const {
  if (order_ == SplitOrder::leftmost_longest) return is_white_space(c);
  return c == U' ' || (c >= U'\t' && c <= U'\r');
}

std::vector<Section> AddedTokenSplitter::split_leftmost_longest(const std::u32string& text) const {
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
  return parts;
}

std::vector<Section> AddedTokenSplitter::split_longest_token_first(const std::u32string& text) const {
  std::vector<Section> parts{{text, -1}};
  for (int t : by_length_) {
    const std::u32string& content = tokens_[t].content;
    std::vector<Section> next;
    for (Section& part : parts) {
      if (part.token >= 0) {
        next.push_back(std::move(part));
        continue;
      }
      std::size_t done = 0;
      for (std::size_t at; (at = part.text.find(content, done)) != std::u32string::npos; done = at + content.size()) {
        if (at > done) next.push_back({part.text.substr(done, at - done), -1});
        next.push_back({content, t});
      }
      if (done < part.text.size()) next.push_back({part.text.substr(done), -1});
    }
    parts = std::move(next);
  }
  return parts;
}

std::vector<Section> AddedTokenSplitter::split(const std::u32string& text) const {
  std::vector<Section> parts =
      order_ == SplitOrder::leftmost_longest ? split_leftmost_longest(text) : split_longest_token_first(text);
  // lstrip: the whitespace before the token goes; rstrip: after it.
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (parts[k].token < 0) continue;
    const AddedToken& t = tokens_[parts[k].token];
    if (t.lstrip && k > 0 && parts[k - 1].token < 0) {
      std::u32string& s = parts[k - 1].text;
      while (!s.empty() && strips(s.back())) s.pop_back();
    }
    if (t.rstrip && k + 1 < parts.size() && parts[k + 1].token < 0) {
      std::u32string& s = parts[k + 1].text;
      std::size_t n = 0;
      while (n < s.size() && strips(s[n])) ++n;
      s.erase(0, n);
    }
  }
  return parts;
}

}  // namespace vkamp::text
