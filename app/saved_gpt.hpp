// A GPT that charlm saved (--save): its config and vocabulary from the
// file's metadata, its weights on the GPU, ready to sample from without
// the text it learned or a trainer (vkamp-generate, charlm --generate-only).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "app/run_options.hpp"
#include "vkamp/context.hpp"
#include "vkamp/models/gpt.hpp"
#include "vkamp/train/evaluator.hpp"
#include "vkamp/train/model.hpp"

namespace vkamp::app {

class SavedGpt {
 public:
  // `precision`: the working format (empty = the one it trained in, from
  // "vkamp.precision"). Throws ConfigError for a file that is not a saved
  // GPT, io::FormatError for a malformed one.
  SavedGpt(Context& ctx, const std::string& path, std::optional<Format> precision = std::nullopt);

  const models::GptConfig& config() const { return config_; }
  const std::string& vocab() const { return vocab_; }
  Format precision() const { return precision_; }
  uint64_t param_count() const { return model_->param_count(); }

  // As generate_text (charlm.hpp), with this model.
  std::string generate(const LmOptions& o, uint64_t seed, const std::function<void(char)>& emit = {});

 private:
  models::GptConfig config_;
  std::string vocab_;
  Format precision_ = Format::F32;
  std::unique_ptr<train::Model> model_;
  std::unique_ptr<train::Evaluator> evaluator_;
};

}  // namespace vkamp::app
