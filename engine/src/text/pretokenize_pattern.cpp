// The backtracking matcher of PretokenizePattern: each alternative in
// order, quantifiers greedy (or lazy) with backtracking, the first success
// wins, as in Oniguruma, which Hugging Face's tokenizers use.
#include "pretokenize_pattern.hpp"

#include "pattern_program.hpp"

namespace vkamp::text {

bool CharSet::contains(char32_t c) const {
  auto in_ranges = [&](char32_t v) {
    for (const auto& [lo, hi] : ranges)
      if (v >= lo && v <= hi) return true;
    return false;
  };
  bool hit = in_ranges(c);
  if (!hit && fold_ascii) {
    if (c >= U'a' && c <= U'z') hit = in_ranges(c - 32);
    else if (c >= U'A' && c <= U'Z') hit = in_ranges(c + 32);
  }
  for (const auto& [test, negated_test] : tests) {
    if (hit) break;
    hit = test(c) != negated_test;
  }
  return hit != negated;
}

namespace {

// What is left to match after the current item: the rest of a sequence,
// another round of a quantified group, or the end (accept).
struct Continuation {
  enum class Kind { rest_of_sequence, repeat_group, accept } kind;
  const Sequence* sequence = nullptr;
  std::size_t index = 0;
  const Item* item = nullptr;
  std::size_t count = 0, round_start = 0;
  const Continuation* next = nullptr;
  std::size_t* end = nullptr;  // accept: where the match ended
};

class Matcher {
 public:
  explicit Matcher(std::u32string_view text) : s_(text) {}

  bool alternatives(const Alternatives& a, std::size_t pos, const Continuation* k) const {
    for (const Sequence& seq : a.options)
      if (sequence(seq, 0, pos, k)) return true;
    return false;
  }

 private:
  bool resume(const Continuation* k, std::size_t pos) const {
    switch (k->kind) {
      case Continuation::Kind::accept:
        *k->end = pos;
        return true;
      case Continuation::Kind::rest_of_sequence:
        return sequence(*k->sequence, k->index, pos, k->next);
      case Continuation::Kind::repeat_group:
        if (pos == k->round_start && k->count > k->item->min) return false;  // an empty round: no progress
        return group_rounds(*k->item, k->count, pos, k->next);
    }
    return false;
  }

  bool sequence(const Sequence& seq, std::size_t index, std::size_t pos, const Continuation* k) const {
    if (index == seq.size()) return resume(k, pos);
    const Continuation rest{Continuation::Kind::rest_of_sequence, &seq, index + 1, nullptr, 0, 0, k, nullptr};
    const Item& item = seq[index];
    switch (item.kind) {
      case Item::Kind::set: return set_rounds(item, pos, &rest);
      case Item::Kind::group: return group_rounds(item, 0, pos, &rest);
      case Item::Kind::look_ahead:
      case Item::Kind::negative_look_ahead: {
        std::size_t ignored = 0;
        const Continuation accept{Continuation::Kind::accept, nullptr, 0, nullptr, 0, 0, nullptr, &ignored};
        const bool found = alternatives(*item.group, pos, &accept);
        if (found != (item.kind == Item::Kind::look_ahead)) return false;
        return resume(&rest, pos);
      }
    }
    return false;
  }

  // A quantified character set, iteratively: the longest run first
  // (greedy) or the shortest (lazy), so a long word needs no deep stack.
  bool set_rounds(const Item& item, std::size_t pos, const Continuation* k) const {
    std::size_t run = 0;
    while (run < item.max && pos + run < s_.size() && item.set.contains(s_[pos + run])) ++run;
    if (run < item.min) return false;
    if (item.greedy) {
      for (std::size_t n = run + 1; n-- > item.min;)
        if (resume(k, pos + n)) return true;
    } else {
      for (std::size_t n = item.min; n <= run; ++n)
        if (resume(k, pos + n)) return true;
    }
    return false;
  }

  bool group_rounds(const Item& item, std::size_t count, std::size_t pos, const Continuation* k) const {
    const Continuation again{Continuation::Kind::repeat_group, nullptr, 0, &item, count + 1, pos, k, nullptr};
    const bool may_stop = count >= item.min;
    const bool may_go_on = count < item.max;
    if (!item.greedy && may_stop && resume(k, pos)) return true;
    if (may_go_on && alternatives(*item.group, pos, &again)) return true;
    return item.greedy && may_stop && resume(k, pos);
  }

  std::u32string_view s_;
};

}  // namespace

PretokenizePattern::PretokenizePattern(std::unique_ptr<Program> p) : program_(std::move(p)) {}
PretokenizePattern::PretokenizePattern(PretokenizePattern&&) noexcept = default;
PretokenizePattern& PretokenizePattern::operator=(PretokenizePattern&&) noexcept = default;
PretokenizePattern::~PretokenizePattern() = default;

PretokenizePattern PretokenizePattern::regex(std::string_view regex) {
  auto p = std::make_unique<Program>();
  p->top = parse_pattern(regex);
  return PretokenizePattern(std::move(p));
}

PretokenizePattern PretokenizePattern::literal(std::u32string_view text) {
  auto p = std::make_unique<Program>();
  Sequence seq;
  for (char32_t c : text) {
    Item item;
    item.set.ranges.push_back({c, c});
    seq.push_back(std::move(item));
  }
  p->top.options.push_back(std::move(seq));
  return PretokenizePattern(std::move(p));
}

std::size_t PretokenizePattern::match_at(std::u32string_view text, std::size_t pos) const {
  std::size_t end = 0;
  const Continuation accept{Continuation::Kind::accept, nullptr, 0, nullptr, 0, 0, nullptr, &end};
  return Matcher(text).alternatives(program_->top, pos, &accept) ? end : std::u32string_view::npos;
}

std::vector<std::pair<std::size_t, std::size_t>> PretokenizePattern::find_all(std::u32string_view text) const {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = match_at(text, pos);
    if (end == std::u32string_view::npos || end == pos) {
      ++pos;
      continue;
    }
    spans.push_back({pos, end});
    pos = end;
  }
  return spans;
}

}  // namespace vkamp::text
