// Running a binary as a child process for the CLI and app tests: its exit
// status and everything it printed (stdout and stderr together). No shell
// runs: the command line is split into words here (split_command_line) and
// started through the platform layer, on Linux and Windows alike.
#pragma once
#include <stdexcept>
#include <string>

#include "vkamp/platform.hpp"
#include "vkamp/platform/process.hpp"

namespace vkamp::test {

struct ChildResult {
  int status = -1;  // exit status, or -1 if it was killed by a signal
  std::string output;
};

// A command line in a small, shell-like form, as the tests write them:
// words split at spaces; '...' and "..." quote (inside double quotes a
// backslash escapes a quote or a backslash); leading NAME=value words set
// variables of the child, and a leading `env -u NAME` removes one, as
// env(1) would; `< FILE` is its standard input and `2> FILE` (or
// `2>FILE`) its standard error.
// Nothing else is special: no globs, no $, no pipes.
inline platform::ChildSpec split_command_line(const std::string& line) {
  std::vector<std::string> words;
  std::vector<bool> quoted;
  std::string word;
  bool in_word = false, any_quote = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(word), quoted.push_back(any_quote);
      word.clear();
      in_word = any_quote = false;
    } else if (c == '\'') {
      const size_t end = line.find('\'', i + 1);
      if (end == std::string::npos) throw std::invalid_argument("unclosed ' in: " + line);
      word += line.substr(i + 1, end - i - 1);
      i = end;
      in_word = any_quote = true;
    } else if (c == '"') {
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size() && (line[i + 1] == '"' || line[i + 1] == '\\')) ++i;
        word += line[i];
      }
      if (i >= line.size()) throw std::invalid_argument("unclosed \" in: " + line);
      in_word = any_quote = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word), quoted.push_back(any_quote);

  platform::ChildSpec spec;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    const bool plain = !quoted[i];
    if (plain && (w == "<" || w == "2>")) {
      if (i + 1 == words.size()) throw std::invalid_argument(w + " without a file in: " + line);
      (w == "<" ? spec.stdin_path : spec.stderr_path) = words[++i];
      continue;
    }
    if (plain && w.size() > 2 && w.rfind("2>", 0) == 0) {
      spec.stderr_path = w.substr(2);
      continue;
    }
    if (plain && spec.argv.empty() && w == "env") {
      size_t k = i + 1;
      for (; k + 1 < words.size() && words[k] == "-u"; k += 2) spec.env.emplace_back(words[k + 1], std::nullopt);
      if (k > i + 1) {
        i = k - 1;
        continue;
      }
    }
    const size_t eq = w.find('=');
    if (plain && spec.argv.empty() && eq != std::string::npos && eq > 0 &&
        w.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == eq) {
      spec.env.emplace_back(w.substr(0, eq), w.substr(eq + 1));
      continue;
    }
    spec.argv.push_back(w);
  }
  return spec;
}

// A Windows program's standard output is text, whose line ends are CRLF:
// the tests read LF, as the program's own lines are written. A lone CR (a
// progress bar redrawn in place) stays.
inline std::string lf_line_ends(std::string text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i)
    if (!(text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) out += text[i];
  return out;
}

inline ChildResult run_child(const platform::ChildSpec& spec) {
  const platform::ChildOutcome r = platform::run_process(spec);
  return {r.status, platform::running_on_windows() ? lf_line_ends(r.output) : r.output};
}

inline ChildResult run_child(const std::string& command) { return run_child(split_command_line(command)); }

}  // namespace vkamp::test
