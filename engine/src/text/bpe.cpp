#include "bpe.hpp"

#include <cstdio>
#include <queue>
#include <stdexcept>

namespace vkamp::text {
namespace {

std::string pair_key(const std::string& a, const std::string& b) {
  std::string k;
  k.reserve(a.size() + b.size() + 1);
  k += a;
  k += '\xFF';
  k += b;
  return k;
}

// The length of the UTF-8 sequence that starts with `b` (the text is valid).
std::size_t sequence_length(unsigned char b) { return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4; }

}  // namespace

Bpe::Bpe(std::unordered_map<std::string, int32_t> vocab, std::vector<std::pair<std::string, std::string>> merges,
         BpeOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  ranks_.reserve(merges.size());
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const auto& [a, b] = merges[i];
    if (!vocab_.count(a + b))
      throw std::invalid_argument("merge " + std::to_string(i) + " (\"" + a + "\", \"" + b + "\") makes \"" + a + b +
                                  "\", which the vocabulary does not have");
    ranks_.emplace(pair_key(a, b), static_cast<int32_t>(i));  // a repeated pair keeps its first rank
  }
  if (options_.unk_token) {
    unk_id_ = id_of(*options_.unk_token);
    if (!unk_id_) throw std::invalid_argument("the unk_token \"" + *options_.unk_token + "\" is not in the vocabulary");
  }
  all_bytes_ = true;
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    const auto id = id_of(name);
    byte_ids_[b] = id ? *id : -1;
    all_bytes_ = all_bytes_ && id;
  }
}

std::optional<int32_t> Bpe::id_of(std::string_view token) const {
  const auto it = vocab_.find(std::string(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

std::optional<int32_t> Bpe::rank_of(const std::string& a, const std::string& b) const {
  const auto it = ranks_.find(pair_key(a, b));
  if (it == ranks_.end()) return std::nullopt;
  return it->second;
}

void Bpe::lookup(const std::string& piece, std::vector<int32_t>& out, bool& last_was_unk) const {
  if (const auto id = id_of(piece)) {
    out.push_back(*id);
    last_was_unk = false;
    return;
  }
  if (options_.byte_fallback) {
    bool have_all = true;
    for (unsigned char b : piece) have_all = have_all && byte_ids_[b] >= 0;
    if (have_all) {
      for (unsigned char b : piece) out.push_back(byte_ids_[b]);
      last_was_unk = false;
      return;
    }
  }
  if (!unk_id_) return;  // no unk token: the piece is dropped, as Hugging Face drops it
  if (!(options_.fuse_unk && last_was_unk)) out.push_back(*unk_id_);
  last_was_unk = true;
}

void Bpe::encode(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (options_.ignore_merges)
    if (const auto id = id_of(word)) {
      out.push_back(*id);
      return;
    }
  // The symbols, one per code point, as a linked list; merged symbols keep
  // the left one's slot, so a slot's index is its original position.
  struct Symbol {
    std::string text;
    int prev, next;
    bool alive = true;
  };
  std::vector<Symbol> sym;
  for (std::size_t i = 0; i < word.size();) {
    const std::size_t n = std::min(sequence_length(static_cast<unsigned char>(word[i])), word.size() - i);
    const int k = static_cast<int>(sym.size());
    sym.push_back({std::string(word.substr(i, n)), k - 1, k + 1});
    i += n;
  }
  sym.back().next = -1;
  // Candidate merges by (rank, left slot): the lowest rank first, the leftmost on a tie.
  using Candidate = std::pair<int32_t, int>;
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  auto push = [&](int left) {
    if (left < 0 || sym[left].next < 0) return;
    if (const auto r = rank_of(sym[left].text, sym[sym[left].next].text)) queue.push({*r, left});
  };
  for (int i = 0; i + 1 < static_cast<int>(sym.size()); ++i) push(i);
  while (!queue.empty()) {
    const auto [rank, left] = queue.top();
    queue.pop();
    Symbol& a = sym[left];
    if (!a.alive || a.next < 0) continue;
    Symbol& b = sym[a.next];
    // Stale when either side merged since: the pair's rank no longer matches.
    const auto now = rank_of(a.text, b.text);
    if (!now || *now != rank) continue;
    a.text += b.text;
    b.alive = false;
    a.next = b.next;
    if (a.next >= 0) sym[a.next].prev = left;
    push(a.prev);
    push(left);
  }
  bool last_was_unk = false;
  for (int i = 0; i >= 0; i = sym[i].next) lookup(sym[i].text, out, last_was_unk);
}

}  // namespace vkamp::text
