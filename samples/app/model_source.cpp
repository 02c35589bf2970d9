#include "app/model_source.hpp"

#include "vkamp/graph/model_file.hpp"
#include "vkamp/train/model_spec.hpp"

namespace vkamp::app {

bool is_model_file(const std::string& model) {
  for (const std::string ext : {".yaml", ".yml"})
    if (model.size() > ext.size() && model.compare(model.size() - ext.size(), ext.size(), ext) == 0) return true;
  return false;
}

std::unique_ptr<train::Trainer> make_trainer(Context& ctx, const train::TrainConfig& cfg, const std::string& model,
                                             train::LossKind loss, const train::HostData& train) {
  // A model string keeps its spec: --save derives PyTorch's names and layouts from it.
  if (is_model_file(model))
    return std::make_unique<train::Trainer>(ctx, cfg, graph::load_model_file(model), loss, train);
  return std::make_unique<train::Trainer>(ctx, cfg, train::parse_model(model), loss, train);
}

}  // namespace vkamp::app
