// tokenizer.json's "added_tokens" (special tokens such as <s> and
// <|endoftext|>, and others): found in the text before the model runs, at
// each position the longest one, leftmost first, as Hugging Face does; or,
// for GGUF files, in llama.cpp's order (tokenizer_st_partition): the longest
// token first, every occurrence of it, then the next longest in what is left.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace vkamp::text {

struct AddedToken {
  std::u32string content;
  int32_t id = 0;
  bool lstrip = false, rstrip = false;  // eat the whitespace before / after it
  bool normalized = false;              // matched in the normalized text, not the raw
  bool special = false;
};

// A stretch of text: an added token (its index in the list), or text between them.
struct Section {
  std::u32string text;
  int token = -1;
};

enum class SplitOrder {
  leftmost_longest,     // Hugging Face's; lstrip/rstrip eat Unicode White_Space
  longest_token_first,  // llama.cpp's; lstrip/rstrip eat ASCII whitespace (C's isspace)
};

class AddedTokenSplitter {
 public:
  // Finds the tokens of `tokens` whose `normalized` equals `normalized`.
  AddedTokenSplitter(const std::vector<AddedToken>& tokens, bool normalized,
                     SplitOrder order = SplitOrder::leftmost_longest);
  // `text` cut at every added token; lstrip/rstrip trim the neighbours'
  // whitespace, which may leave a stretch empty: it still counts as a
  // section (Metaspace's "first" numbers them).
  std::vector<Section> split(const std::u32string& text) const;

 private:
  std::vector<Section> split_leftmost_longest(const std::u32string& text) const;
  std::vector<Section> split_longest_token_first(const std::u32string& text) const;
  bool strips(char32_t c) const;

  struct Node {
    std::unordered_map<char32_t, int> next;
    int token = -1;
  };
  const std::vector<AddedToken>& tokens_;
  std::vector<Node> trie_;
  SplitOrder order_;
  std::vector<int> by_length_;  // longest_token_first: the tokens to find, longest first
};

}  // namespace vkamp::text
