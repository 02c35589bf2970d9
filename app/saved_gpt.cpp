#include "app/saved_gpt.hpp"

#include <cmath>

#include "app/charlm.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/io/torch_layout.hpp"

namespace vkamp::app {
namespace {

// A weight that is NaN or infinite makes every output NaN: refuse it at
// load, naming the first such tensor (file order) and element.
void refuse_nonfinite(const io::TensorFile& file, const std::string& path) {
  for (const io::Tensor& t : file.tensors) {
    if (t.dtype != io::DType::F32 && t.dtype != io::DType::F16 && t.dtype != io::DType::BF16) continue;
    const std::vector<float> v = file.floats(t.name, path);
    for (size_t i = 0; i < v.size(); ++i)
      if (!std::isfinite(v[i]))
        throw io::FormatError(path + ": tensor '" + t.name + "' holds " + (std::isnan(v[i]) ? "NaN" : "an infinity") +
                              " (element " + std::to_string(i) + " of " + std::to_string(v.size()) +
                              "): the weights are damaged, or saved from a run that diverged");
  }
}

}  // namespace

SavedGpt::SavedGpt(Context& ctx, const std::string& path, std::optional<Format> precision) {
  const io::TensorFile file = io::read_safetensors(path);
  config_ = models::gpt_config_from_metadata(file.metadata, path);
  vocab_ = vocab_from_metadata(file.metadata, path);
  if (vocab_.size() != config_.vocab_size)
    throw vkamp::ConfigError(path + ": metadata vkamp.vocab has " + std::to_string(vocab_.size()) +
                             " bytes but vkamp.vocab_size is " + std::to_string(config_.vocab_size));
  if (precision) {
    precision_ = *precision;
  } else {
    const auto it = file.metadata.find("vkamp.precision");
    const std::optional<Format> saved = it == file.metadata.end() ? Format::F32 : parse_format(it->second);
    if (!saved) throw vkamp::ConfigError(path + ": metadata vkamp.precision '" + it->second + "' is not a precision");
    precision_ = *saved;
  }
  refuse_nonfinite(file, path);
  graph::Graph g = models::gpt_graph(config_);
  const std::vector<float> weights = io::import_torch_tensors(g, file, path);
  // One window at a time; no optimizer moments (nothing trains).
  model_ = std::make_unique<train::Model>(ctx, std::move(g), precision_, /*max_rows=*/1, /*seed=*/1, false, false);
  model_->write_master(weights);
  evaluator_ = std::make_unique<train::Evaluator>(ctx, *model_, train::LossKind::SoftmaxXent, 1);
}

std::string SavedGpt::generate(const LmOptions& o, uint64_t seed, const std::function<void(char)>& emit) {
  const PredictWindows predict = [&](const std::vector<float>& x, uint32_t rows) {
    return evaluator_->predict(x, rows);
  };
  return generate_text(gpt_next_logits(config_, *model_, predict), vocab_, o, seed, emit);
}

}  // namespace vkamp::app
