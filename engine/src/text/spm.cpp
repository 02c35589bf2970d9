#include "spm.hpp"

#include <cstdio>
#include <queue>

#include "vkamp/text/tokenizer.hpp"

namespace vkamp::text {
namespace {

// The length of the UTF-8 sequence that starts with `b`.
std::size_t sequence_length(unsigned char b) { return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4; }

}  // namespace

Spm::Spm(std::unordered_map<std::string, int32_t> vocab, std::vector<float> scores)
    : vocab_(std::move(vocab)), scores_(std::move(scores)) {
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    auto id = id_of(name);
    if (!id) id = id_of(std::string(1, static_cast<char>(b)));
    byte_ids_[b] = id ? *id : -1;
  }
}

std::optional<int32_t> Spm::id_of(std::string_view token) const {
  const auto it = vocab_.find(std::string(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

void Spm::encode(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  // Symbols as a linked list of byte spans; a merge grows the left one and
  // empties the right one.
  struct Symbol {
    std::size_t begin, size;
    int prev, next;
  };
  std::vector<Symbol> sym;
  for (std::size_t i = 0; i < word.size();) {
    const std::size_t n = std::min(sequence_length(static_cast<unsigned char>(word[i])), word.size() - i);
    const int k = static_cast<int>(sym.size());
    sym.push_back({i, n, k - 1, k + 1});
    i += n;
  }
  sym.back().next = -1;
  struct Candidate {
    float score;
    int left, right;
    std::size_t size;  // the pair's bytes when found: a pair whose sides changed since is stale
  };
  // The highest score first, the leftmost on a tie.
  auto worse = [](const Candidate& a, const Candidate& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> queue(worse);
  auto push = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const std::size_t size = sym[left].size + sym[right].size;
    const auto id = id_of(word.substr(sym[left].begin, size));
    if (!id || std::size_t(*id) >= scores_.size()) return;
    queue.push({scores_[*id], left, right, size});
  };
  for (int i = 1; i < static_cast<int>(sym.size()); ++i) push(i - 1, i);
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& a = sym[c.left];
    Symbol& b = sym[c.right];
    if (a.size == 0 || b.size == 0 || a.size + b.size != c.size) continue;
    a.size += b.size;
    b.size = 0;
    a.next = b.next;
    if (a.next >= 0) sym[a.next].prev = c.left;
    push(a.prev, c.left);
    push(c.left, a.next);
  }
  // Merged pieces are tokens by construction; a single code point that is
  // not becomes its bytes.
  for (int i = 0; i >= 0; i = sym[i].next) {
    const std::string_view piece = word.substr(sym[i].begin, sym[i].size);
    if (const auto id = id_of(piece)) {
      out.push_back(*id);
      continue;
    }
    for (unsigned char byte : piece) {
      if (byte_ids_[byte] < 0) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", byte);
        throw TokenizerError(std::string("the vocabulary has no byte token ") + name + " for text outside it");
      }
      out.push_back(byte_ids_[byte]);
    }
  }
}

}  // namespace vkamp::text
