#include "app/model_source.hpp"

#include "vkamp/graph/model_file.hpp"

namespace vkamp::app {

bool is_model_file(const std::string& model) {
  for (const std::string ext : {".yaml", ".yml"})
    if (model.size() > ext.size() && model.compare(model.size() - ext.size(), ext.size(), ext) == 0) return true;
  return false;
}

ModelSource load_model(const std::string& model) {
  if (is_model_file(model)) return {graph::load_model_file(model), std::nullopt};
  models::ModelSpec spec = models::parse_model(model);
  return {models::build_graph(spec), spec};
}

std::unique_ptr<train::Trainer> make_trainer(Context& ctx, const config::TrainConfig& cfg, ModelSource model,
                                             train::LossKind loss, const data::HostData& train) {
  if (model.spec) return std::make_unique<train::Trainer>(ctx, cfg, *model.spec, loss, train);
  return std::make_unique<train::Trainer>(ctx, cfg, std::move(model.graph), loss, train);
}

}  // namespace vkamp::app
