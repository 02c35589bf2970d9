// vkamp-finetune's text: a plain text file (one document) or JSON Lines of
// {"text": ...}, {"prompt": ..., "completion": ...} or {"messages": [...]}
// (one document a line; conversations: app/finetune_chat.hpp), tokenized with the model's tokenizer (BOS as its
// tokenizer_config.json says) and EOS after each document, then cut into
// training and validation tokens, which HostData::windows packs into
// --seq-len sequences. A prompt's tokens are marked data::kNotTarget: the
// model reads them, and the loss is on the completion (and its EOS) alone.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "app/finetune_chat.hpp"
#include "vkamp/text/tokenizer.hpp"

namespace vkamp::app {

struct FineTuneText {
  std::string source;
  size_t documents = 0;
  std::vector<uint32_t> train, val;  // the first and the last val_fraction of the tokens
  size_t targets = 0;                // the tokens that are labels (all but prompts' and the first)
  size_t conversations = 0;          // the "messages" lines among the documents
  std::string sample;                // the first conversation rendered, its targets in [[ ]] (and how they were found)
};

// Throws data::DataError naming file:line for a line that is not JSON, not
// an object, or has neither a string "text" nor string "prompt" and
// "completion" (or an empty completion), for a "messages" line chat_document
// refuses, and for a text too short to give a sequence of seq_len (+ 1)
// tokens, or with no target, on each side.
FineTuneText load_finetune_text(const std::string& path, const text::Tokenizer& tok, double val_fraction,
                                uint32_t seq_len, const ChatData& chat = {});

}  // namespace vkamp::app
