// vkamp-finetune's text: a plain text file (one document) or JSON Lines of
// {"text": ...} (one document a line), tokenized with the model's
// tokenizer (BOS as its tokenizer_config.json says) and EOS after each
// document, then cut into training and validation tokens, which
// HostData::windows packs into --seq-len sequences.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vkamp/text/tokenizer.hpp"

namespace vkamp::app {

struct FineTuneText {
  std::string source;
  size_t documents = 0;
  std::vector<uint32_t> train, val;  // the first and the last val_fraction of the tokens
};

// Throws data::DataError naming file:line for a line that is not JSON, not
// an object, or has no string "text" (prompt/completion lines are refused:
// a loss on the completion alone is not built yet), and for a text too
// short to give a sequence of seq_len (+ 1) tokens on each side.
FineTuneText load_finetune_text(const std::string& path, const text::Tokenizer& tok, double val_fraction,
                                uint32_t seq_len);

}  // namespace vkamp::app
