// Unicode Normalization Form C (UAX #15): full canonical decomposition,
// the canonical ordering of combining marks, then canonical composition.
// Qwen2's tokenizer.json names this normalizer.
#include <algorithm>

#include "unicode.hpp"

namespace vkamp::text {
namespace {

// Hangul syllables compose and decompose by arithmetic, not by table.
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount,
                   kSCount = kLCount * kNCount;

uint8_t combining_class(char32_t c) {
  using tables::kCombiningRuns;
  const auto* end = kCombiningRuns + tables::kCombiningRunCount;
  const auto* it = std::upper_bound(kCombiningRuns, end, c,
                                    [](char32_t v, const tables::CombiningRun& r) { return v < r.first; });
  if (it == kCombiningRuns) return 0;
  --it;
  return c <= it->last ? it->combining_class : 0;
}

void decompose(char32_t c, std::u32string& out) {
  if (c >= kSBase && c < kSBase + kSCount) {
    const char32_t s = c - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount) out.push_back(kTBase + s % kTCount);
    return;
  }
  using tables::kDecompositions;
  const auto* end = kDecompositions + tables::kDecompositionCount;
  const auto* it = std::lower_bound(kDecompositions, end, c,
                                    [](const tables::Decomposition& d, char32_t v) { return d.code_point < v; });
  if (it == end || it->code_point != c) {
    out.push_back(c);
    return;
  }
  decompose(it->first, out);
  if (it->second) decompose(it->second, out);
}

// The primary composite of a + b, or 0.
char32_t compose(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount)
    return a + (b - kTBase);
  using tables::kCompositions;
  const auto* end = kCompositions + tables::kCompositionCount;
  const auto* it = std::lower_bound(kCompositions, end, std::make_pair(a, b),
                                    [](const tables::Composition& c, std::pair<char32_t, char32_t> v) {
                                      return std::make_pair(c.first, c.second) < v;
                                    });
  return it != end && it->first == a && it->second == b ? it->composite : 0;
}

}  // namespace

std::u32string nfc(std::u32string_view s) {
  std::u32string d;
  d.reserve(s.size());
  for (char32_t c : s) decompose(c, d);
  // Canonical ordering: a stable sort of each run of nonzero classes.
  for (std::size_t i = 0; i < d.size();) {
    if (combining_class(d[i]) == 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < d.size() && combining_class(d[j]) != 0) ++j;
    std::stable_sort(d.begin() + i, d.begin() + j,
                     [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
    i = j;
  }
  // Composition: each character joins the last starter unless a character
  // between them blocks it (same or higher class, or a starter).
  std::u32string out;
  out.reserve(d.size());
  std::size_t starter = std::u32string::npos;
  int last_class = -1;
  for (char32_t c : d) {
    const int cc = combining_class(c);
    if (starter != std::u32string::npos && (last_class < cc || (last_class == -1 && cc == 0))) {
      if (const char32_t composite = compose(out[starter], c)) {
        out[starter] = composite;
        continue;
      }
    }
    if (cc == 0) {
      starter = out.size();
      last_class = -1;
    } else {
      last_class = cc;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace vkamp::text
