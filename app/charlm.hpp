// charlm, the character-level GPT: its text, its sizes and its sampler,
// shared by the charlm sample and vkamp-studio. Definitions match
// tests/golden/gpt_reference.py, which checks an exported model in PyTorch:
//  - the corpus is --text FILE, or every regular file directly in
//    /usr/share/games/fortunes (not the .dat indexes, not the .u8 links),
//    sorted by name and concatenated; every byte is a token, and the
//    vocabulary is the text's distinct bytes in order;
//  - the first 9/10 of the tokens (n * 9 / 10) train, the rest validate;
//  - the validation loss is the mean cross-entropy over every position of
//    the consecutive block_size windows that cover the validation text (a
//    shorter tail is dropped); training reads the windows at every offset.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "app/run_loop.hpp"
#include "app/run_options.hpp"
#include "vkamp/models/gpt.hpp"
#include "vkamp/data/host_data.hpp"
#include "vkamp/train/trainer.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::app {

// /usr/share/games/fortunes (Windows: games\fortunes beside the program).
inline std::string fortunes_dir() { return platform::shared_data_dir() + "/games/fortunes"; }

struct CharCorpus {
  std::string source;  // the file, or the fortunes directory
  std::string vocab;   // token id -> byte
  std::vector<uint32_t> tokens;
  size_t split = 0;    // tokens [0, split) train, [split, end) validate
};

// Throws data::DataError (a missing or empty text, fortunes not installed).
CharCorpus load_corpus(const LmOptions& o);

// The size preset with the flags' overrides; ConfigError for an unknown size.
models::GptConfig gpt_config(const LmOptions& o, uint32_t vocab_size);

// Training windows at every offset and the validation windows, of
// block_size tokens. Throws DataError when a split is shorter than a window.
struct CharWindows {
  data::HostData train, val;
};
CharWindows char_windows(const CharCorpus& c, uint32_t block_size);

// The metadata of an exported GPT: the config, "vkamp.vocab" (a JSON string
// whose i-th character is U+00XX for the byte of token i).
std::map<std::string, std::string> charlm_metadata(const models::GptConfig& c, const std::string& vocab);

// What charlm --save writes beside the GPT: charlm_metadata, and
// "vkamp.val_loss", the saved weights' loss over the whole of `val`:
// `last_loss` for the last weights; with --save-best the best evaluation's
// weights, read again over the whole text (their evaluation may have read
// only --eval-iters batches), the trainer's weights left as trained.
std::map<std::string, std::string> charlm_save_metadata(train::Trainer& t, const models::GptConfig& c,
                                                        const std::string& vocab, const data::HostData& val,
                                                        const RunOptions& cfg, const RunResult& s, double last_loss);

// o.prompt (a new line when empty) as token ids; a byte outside the
// vocabulary is a ConfigError (checked before training, so nothing is lost).
std::vector<uint32_t> prompt_ids(const std::string& vocab, const LmOptions& o);

// charlm_metadata's inverse: the vocabulary of a saved GPT. Throws
// ConfigError naming `origin` when "vkamp.vocab" is missing or malformed.
std::string vocab_from_metadata(const std::map<std::string, std::string>& meta, const std::string& origin);

// A GPT's logits (rows x positions x vocab, fp32) for `rows` windows of
// token ids, as Trainer::predict and Evaluator::predict compute them.
using PredictWindows = std::function<std::vector<float>(const std::vector<float>& windows, uint32_t rows)>;
// The logits (fp32, one per vocabulary byte) for the token after `ids`.
using NextLogits = std::function<std::vector<float>(const std::vector<uint32_t>& ids)>;

// A GPT's NextLogits: from a KV cache (models::GptDecoder, over `model`'s
// working weights) while the text fits the window, then from `predict`'s
// full forward over the last block_size tokens (nanoGPT's crop). Either
// way every position sees the same tokens at the same positions.
NextLogits gpt_next_logits(const models::GptConfig& c, train::Model& model, PredictWindows predict);

// Continues o.prompt by o.generate bytes, sampling each from the model's
// next-token distribution at o.temperature among the o.top_k likeliest
// (all when 0), seeded. Returns the prompt and its continuation; throws
// vkamp::Error if the model's outputs are not finite. The same weights,
// format, options and seed give the same text wherever the model runs
// (a trainer at the end of training, or saved_gpt.hpp from its file).
// `emit`, when set, receives each sampled byte as it comes (streaming).
std::string generate_text(const NextLogits& next, const std::string& vocab, const LmOptions& o, uint64_t seed,
                          const std::function<void(char)>& emit = {});
// With a trainer's model (c: its GPT's config).
std::string generate_text(train::Trainer& t, const models::GptConfig& c, const std::string& vocab,
                          const LmOptions& o, uint64_t seed);

}  // namespace vkamp::app
