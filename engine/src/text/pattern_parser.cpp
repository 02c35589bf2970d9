// The parser of the pre-tokenizer patterns' regex subset
// (pretokenize_pattern.hpp says which constructs, and why no others).
#include <string>

#include "pattern_program.hpp"
#include "unicode.hpp"

namespace vkamp::text {
namespace {

constexpr char32_t kNoChar = 0xFFFFFFFF;  // an escape that names a class, not one code point

bool is_Nd(char32_t c) { return category(c) == Category::Nd; }
// Oniguruma's \w: letters, marks, decimal digits, connector punctuation.
bool is_word(char32_t c) { return is_letter(c) || is_mark(c) || is_Nd(c) || category(c) == Category::Pc; }

class Parser {
 public:
  explicit Parser(std::string_view regex) : source_(regex), s_(decode_utf8(regex)) {}

  Alternatives parse() {
    Alternatives a = alternatives(false);
    if (i_ < s_.size()) fail("an unmatched ')'");
    return a;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw PatternError(what + " at offset " + std::to_string(i_) + " of the pattern " + std::string(source_) +
                       " (vkamp matches the subset of regular expressions that Hugging Face's pre-tokenizer "
                       "patterns use)");
  }
  bool more() const { return i_ < s_.size(); }
  char32_t peek() const { return more() ? s_[i_] : 0; }
  bool eat(char32_t c) {
    if (peek() != c || !more()) return false;
    ++i_;
    return true;
  }

  Alternatives alternatives(bool fold) {
    Alternatives a;
    a.options.push_back(sequence(fold));
    while (eat(U'|')) a.options.push_back(sequence(fold));
    return a;
  }

  Sequence sequence(bool fold) {
    Sequence seq;
    while (more() && peek() != U'|' && peek() != U')') {
      Item item = atom(fold);
      quantifier(item);
      seq.push_back(std::move(item));
    }
    return seq;
  }

  Item atom(bool fold) {
    Item item;
    const char32_t c = s_[i_++];
    if (c == U'(') return group(fold);
    if (c == U'[') {
      item.set = char_class(fold);
      return item;
    }
    if (c == U'.') {
      item.set.negated = true;
      item.set.ranges.push_back({U'\n', U'\n'});  // Oniguruma's '.' stops only at \n
      return item;
    }
    if (c == U'^' || c == U'$') fail(std::string("the anchor '") + static_cast<char>(c) + "'");
    if (c == U'*' || c == U'+' || c == U'?' || c == U'{') fail("a quantifier with nothing to repeat");
    item.set.fold_ascii = fold;
    if (c == U'\\') {
      escape(item.set, false);
    } else {
      item.set.ranges.push_back({c, c});
    }
    return item;
  }

  Item group(bool fold) {
    Item item;
    item.kind = Item::Kind::group;
    bool inner_fold = fold;
    if (eat(U'?')) {
      if (eat(U':')) {
      } else if (eat(U'=')) {
        item.kind = Item::Kind::look_ahead;
      } else if (eat(U'!')) {
        item.kind = Item::Kind::negative_look_ahead;
      } else if (peek() == U'i' && i_ + 1 < s_.size() && s_[i_ + 1] == U':') {
        i_ += 2;
        inner_fold = true;
      } else if (peek() == U'<') {
        fail("a lookbehind or named group");
      } else if (peek() == U'>') {
        fail("an atomic group");
      } else {
        fail("the group option '(?" + encode_utf8(std::u32string(1, peek())) + "'");
      }
    }
    item.group = std::make_shared<Alternatives>(alternatives(inner_fold));
    if (!eat(U')')) fail("a '(' without its ')'");
    return item;
  }

  std::size_t number() {
    std::size_t n = 0;
    const std::size_t start = i_;
    while (more() && peek() >= U'0' && peek() <= U'9') n = n * 10 + (s_[i_++] - U'0');
    if (i_ == start) fail("a '{' quantifier without a number");
    return n;
  }

  void quantifier(Item& item) {
    if (eat(U'?')) {
      item.min = 0, item.max = 1;
    } else if (eat(U'*')) {
      item.min = 0, item.max = std::string::npos;
    } else if (eat(U'+')) {
      item.min = 1, item.max = std::string::npos;
    } else if (eat(U'{')) {
      item.min = item.max = number();
      if (eat(U',')) item.max = peek() == U'}' ? std::string::npos : number();
      if (!eat(U'}')) fail("a '{' quantifier without its '}'");
      if (item.max < item.min) fail("a '{n,m}' quantifier with m < n");
    } else {
      return;
    }
    if (item.kind == Item::Kind::look_ahead || item.kind == Item::Kind::negative_look_ahead)
      fail("a quantified lookahead");
    if (eat(U'?')) item.greedy = false;
    else if (peek() == U'+') fail("a possessive quantifier");
    if (peek() == U'*' || peek() == U'+' || peek() == U'?' || peek() == U'{') fail("a stacked quantifier");
  }

  char32_t hex(std::size_t digits) {
    char32_t v = 0;
    for (std::size_t k = 0; k < digits; ++k) {
      const char32_t c = peek();
      int d = c >= U'0' && c <= U'9' ? int(c - U'0') : c >= U'a' && c <= U'f' ? int(c - U'a' + 10)
              : c >= U'A' && c <= U'F'                ? int(c - U'A' + 10) : -1;
      if (d < 0) fail("a malformed hexadecimal escape");
      v = v * 16 + d;
      ++i_;
    }
    return v;
  }

  // After a backslash: adds what the escape names to `set`; returns the
  // single code point it stands for (for a class range), or kNoChar for a class.
  char32_t escape(CharSet& set, bool in_class) {
    if (!more()) fail("a '\\' at the end");
    const char32_t c = s_[i_++];
    auto single = [&](char32_t v) {
      set.ranges.push_back({v, v});
      return v;
    };
    switch (c) {
      case U'n': return single(U'\n');
      case U'r': return single(U'\r');
      case U't': return single(U'\t');
      case U'f': return single(U'\f');
      case U'v': return single(U'\v');
      case U'a': return single(U'\a');
      case U'e': return single(0x1B);
      case U's': set.tests.push_back({is_white_space, false}); return kNoChar;
      case U'S': set.tests.push_back({is_white_space, true}); return kNoChar;
      case U'd': set.tests.push_back({is_Nd, false}); return kNoChar;
      case U'D': set.tests.push_back({is_Nd, true}); return kNoChar;
      case U'w': set.tests.push_back({is_word, false}); return kNoChar;
      case U'W': set.tests.push_back({is_word, true}); return kNoChar;
      case U'x':
        if (eat(U'{')) {
          char32_t v = 0;
          while (more() && peek() != U'}') v = v * 16 + hex(1);
          if (!eat(U'}')) fail("a '\\x{' without its '}'");
          return single(v);
        }
        return single(hex(2));
      case U'u': return single(hex(4));
      case U'p':
      case U'P': {
        if (!eat(U'{')) fail("a '\\p' without '{NAME}'");
        std::string name;
        while (more() && peek() != U'}') name += static_cast<char>(s_[i_++]);
        if (!eat(U'}')) fail("a '\\p{' without its '}'");
        bool negate = c == U'P';
        if (!name.empty() && name[0] == '^') negate = !negate, name.erase(0, 1);
        bool (*test)(char32_t) = nullptr;
        if (!category_named(name, test)) fail("the Unicode property '\\p{" + name + "}'");
        set.tests.push_back({test, negate});
        return kNoChar;
      }
      default: break;
    }
    if ((c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') || (c >= U'0' && c <= U'9'))
      fail(std::string("the escape '\\") + static_cast<char>(c) + "'" + (in_class ? " in a class" : ""));
    return single(c);  // an escaped punctuation character stands for itself
  }

  CharSet char_class(bool fold) {
    CharSet set;
    set.fold_ascii = fold;
    if (eat(U'^')) set.negated = true;
    bool first = true;
    while (more() && (peek() != U']' || first)) {
      first = false;
      char32_t lo = s_[i_++];
      if (lo == U'[') fail("a nested class or POSIX bracket");
      if (lo == U'&' && peek() == U'&') fail("a class intersection '&&'");
      if (lo == U'\\') {
        lo = escape(set, true);
        if (lo == kNoChar) continue;  // a property: no range from it
        set.ranges.pop_back();
      }
      char32_t hi = lo;
      if (peek() == U'-' && i_ + 1 < s_.size() && s_[i_ + 1] != U']') {
        ++i_;
        hi = s_[i_++];
        if (hi == U'\\') {
          CharSet scratch;
          hi = escape(scratch, true);
          if (hi == kNoChar) fail("a range ending in a property");
        }
        if (hi < lo) fail("a class range out of order");
      }
      set.ranges.push_back({lo, hi});
    }
    if (!eat(U']')) fail("a '[' without its ']'");
    return set;
  }

  std::string_view source_;
  std::u32string s_;
  std::size_t i_ = 0;
};

}  // namespace

Alternatives parse_pattern(std::string_view regex) { return Parser(regex).parse(); }

}  // namespace vkamp::text
