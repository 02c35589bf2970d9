#include "lexer.hpp"

#include <cstring>

#include "value.hpp"

namespace vkamp::chat {
namespace {

// Python's str.isspace() over ASCII (templates' whitespace is ASCII).
bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || (c >= 0x1C && c <= 0x1F); }
bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80); }
bool name_char(char c) { return name_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

[[noreturn]] void error(int line, const std::string& what) { fail("line " + std::to_string(line) + ": " + what); }

// jinja2 reads a source with \r\n, \r and \n as \n, less one trailing newline.
std::string normalize_newlines(const std::string& src) {
  std::string out;
  for (std::size_t k = 0; k < src.size(); ++k) {
    if (src[k] == '\r') {
      out += '\n';
      if (k + 1 < src.size() && src[k + 1] == '\n') ++k;
    } else {
      out += src[k];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// A string literal's body decoded as Python's "unicode-escape" codec does.
std::string unescape(const std::string& body, int line) {
  std::string out;
  for (std::size_t k = 0; k < body.size(); ++k) {
    if (body[k] != '\\' || k + 1 == body.size()) {
      out += body[k];
      continue;
    }
    const char c = body[++k];
    auto hex_digits = [&](std::size_t n) {
      const std::string h = body.substr(k + 1, n);
      if (h.size() != n || h.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
        error(line, "truncated \\x/\\u escape");
      k += n;
      return static_cast<uint32_t>(std::stoul(h, nullptr, 16));
    };
    switch (c) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case '\n': break;  // a line continuation
      case 'x': append_utf8(out, hex_digits(2)); break;
      case 'u': {
        uint32_t cp = hex_digits(4);
        if (cp >= 0xD800 && cp < 0xDC00 && body.compare(k + 1, 2, "\\u") == 0) {  // a surrogate pair
          k += 2;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (hex_digits(4) - 0xDC00);
        }
        append_utf8(out, cp);
        break;
      }
      case 'U': append_utf8(out, hex_digits(8)); break;
      default:
        if (c >= '0' && c <= '7') {
          uint32_t v = c - '0';
          for (int d = 0; d < 2 && k + 1 < body.size() && body[k + 1] >= '0' && body[k + 1] <= '7'; ++d)
            v = v * 8 + (body[++k] - '0');
          append_utf8(out, v);
        } else {
          out += '\\';
          out += c;
        }
    }
  }
  return out;
}

struct Lexer {
  std::string src;
  std::size_t pos = 0;
  int line = 1;
  bool line_starting = true;
  std::vector<Piece> pieces;

  void advance_to(std::size_t p) {
    for (std::size_t k = pos; k < p; ++k) line += src[k] == '\n';
    pos = p;
  }

  void emit_text(std::string text, int at) {
    if (!text.empty()) pieces.push_back({Piece::Type::Text, std::move(text), {}, at});
  }

  // The end of a {% %} or {# #} tag at `p` as jinja2's rules match it:
  // "+%}", "-%}" and the whitespace after, or "%}" and (trim_blocks) one newline.
  std::size_t block_end(std::size_t p, const char* close) const {
    if (src[p] == '+' && src.compare(p + 1, 2, close) == 0) return p + 3;
    if (src[p] == '-' && src.compare(p + 1, 2, close) == 0) {
      p += 3;
      while (p < src.size() && space(src[p])) ++p;
      return p;
    }
    if (src.compare(p, 2, close) == 0) return p + 2 + (p + 2 < src.size() && src[p + 2] == '\n');
    return 0;
  }
  std::size_t variable_end(std::size_t p) const {
    if (src[p] == '-' && src.compare(p + 1, 2, "}}") == 0) {
      p += 3;
      while (p < src.size() && space(src[p])) ++p;
      return p;
    }
    return src.compare(p, 2, "}}") == 0 ? p + 2 : 0;
  }

  void finish_tag(std::size_t end) {
    line_starting = src[end - 1] == '\n';
    advance_to(end);
  }

  void comment() {
    for (std::size_t p = pos; p < src.size(); ++p)
      if (std::size_t end = block_end(p, "#}")) return finish_tag(end);
    error(line, "missing end of comment tag");
  }

  void tag(Piece::Type type) {
    Piece piece{type, {}, {}, line};
    std::vector<char> balance;
    for (;;) {
      if (pos >= src.size()) error(piece.line, "unexpected end of template inside a tag");
      if (balance.empty()) {
        const std::size_t end = type == Piece::Type::Print ? variable_end(pos) : block_end(pos, "%}");
        if (end) {
          pieces.push_back(std::move(piece));
          return finish_tag(end);
        }
      }
      const char c = src[pos];
      std::size_t p = pos;
      if (space(c)) {
        while (p < src.size() && space(src[p])) ++p;
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        while (p < src.size() && (std::isdigit(static_cast<unsigned char>(src[p])) || src[p] == '_')) ++p;
        const bool fraction = p + 1 < src.size() && src[p] == '.' && std::isdigit(static_cast<unsigned char>(src[p + 1])) &&
                              !(pos > 0 && src[pos - 1] == '.');
        if (fraction) {
          ++p;
          while (p < src.size() && (std::isdigit(static_cast<unsigned char>(src[p])) || src[p] == '_')) ++p;
        }
        std::size_t q = p;
        if (q < src.size() && (src[q] == 'e' || src[q] == 'E')) {
          ++q;
          if (q < src.size() && (src[q] == '+' || src[q] == '-')) ++q;
          if (q < src.size() && std::isdigit(static_cast<unsigned char>(src[q]))) {
            while (q < src.size() && std::isdigit(static_cast<unsigned char>(src[q]))) ++q;
            p = q;
          }
        }
        std::string digits;
        for (std::size_t k = pos; k < p; ++k)
          if (src[k] != '_') digits += src[k];
        Token t{digits.find_first_of(".eE") == std::string::npos ? Token::Type::Integer : Token::Type::Float, digits};
        if (t.type == Token::Type::Integer) t.integer = std::stoll(digits);
        else t.real = std::stod(digits);
        piece.tokens.push_back(t);
      } else if (name_start(c)) {
        while (p < src.size() && name_char(src[p])) ++p;
        piece.tokens.push_back({Token::Type::Name, src.substr(pos, p - pos)});
      } else if (c == '\'' || c == '"') {
        ++p;
        while (p < src.size() && src[p] != c) p += src[p] == '\\' ? 2 : 1;
        if (p >= src.size()) error(line, "unterminated string");
        piece.tokens.push_back({Token::Type::String, unescape(src.substr(pos + 1, p - pos - 1), line)});
        ++p;
      } else {
        static const char* const ops[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "/", "*", "%", "~", "[", "]",
                                          "(",  ")",  "{",  "}",  "<",  ">",  "=", ".", ":", "|", ",", ";"};
        const char* op = nullptr;
        for (const char* o : ops)
          if (src.compare(pos, std::strlen(o), o) == 0) {
            op = o;
            break;
          }
        if (!op) error(line, std::string("unexpected character '") + c + "'");
        const std::string s = op;
        if (s == "(" || s == "[" || s == "{") balance.push_back(s == "(" ? ')' : s == "[" ? ']' : '}');
        if (s == ")" || s == "]" || s == "}") {
          if (balance.empty() || balance.back() != s[0]) error(line, "unexpected '" + s + "'");
          balance.pop_back();
        }
        piece.tokens.push_back({Token::Type::Operator, s});
        p += s.size();
      }
      advance_to(p);
    }
  }

  void run() {
    for (;;) {
      std::size_t start = pos;
      std::size_t found = std::string::npos;
      for (std::size_t p = pos; p + 1 < src.size(); ++p)
        if (src[p] == '{' && (src[p + 1] == '{' || src[p + 1] == '%' || src[p + 1] == '#')) {
          found = p;
          break;
        }
      if (found == std::string::npos) {
        emit_text(src.substr(pos), line);
        return;
      }
      std::string text = src.substr(start, found - start);
      const char kind = src[found + 1];
      const char sign = found + 2 < src.size() && (src[found + 2] == '-' || src[found + 2] == '+') ? src[found + 2] : 0;
      if (sign == '-') {
        std::size_t keep = text.size();
        while (keep > 0 && space(text[keep - 1])) --keep;
        text.resize(keep);
      } else if (sign != '+' && kind != '{') {  // lstrip_blocks: not for {{ }}
        const std::size_t l_pos = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        if (l_pos > 0 || line_starting) {
          bool blank = l_pos < text.size();
          for (std::size_t k = l_pos; k < text.size(); ++k) blank = blank && space(text[k]);
          if (blank) text.resize(l_pos);
        }
      }
      const int text_line = line;
      emit_text(std::move(text), text_line);
      advance_to(found + 2 + (sign ? 1 : 0));
      if (kind == '#') comment();
      else tag(kind == '{' ? Piece::Type::Print : Piece::Type::Statement);
    }
  }
};

}  // namespace

std::vector<Piece> lex_template(const std::string& source) {
  Lexer lexer;
  lexer.src = normalize_newlines(source);
  lexer.run();
  return std::move(lexer.pieces);
}

}  // namespace vkamp::chat
