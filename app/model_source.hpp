// A model as the user names it on the command line: a model string
// ("784-256r-10", models/model_spec.hpp) or a YAML model file
// (graph/model_file.hpp). Builds the trainer for either.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "vkamp/context.hpp"
#include "vkamp/graph/graph.hpp"
#include "vkamp/models/model_spec.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::app {

// Whether `model` names a YAML model file (.yaml or .yml) rather than a model string.
bool is_model_file(const std::string& model);

// The model read once: its graph, and for a model string its spec too
// (--save derives PyTorch's names and layouts from the spec).
struct ModelSource {
  graph::Graph graph;
  std::optional<models::ModelSpec> spec;
};
// Throws ConfigError for a bad model string or file.
ModelSource load_model(const std::string& model);

// The trainer for `model` over `train`.
std::unique_ptr<train::Trainer> make_trainer(Context& ctx, const config::TrainConfig& cfg, ModelSource model,
                                             train::LossKind loss, const data::HostData& train);

}  // namespace vkamp::app
