#include "vkamp/graph/op_registry.hpp"

namespace vkamp::graph {

// Each op's definition, from its file under ops/.
OpDef linear_op();
OpDef conv2d_op();
OpDef max_pool_op();
OpDef avg_pool_op();
OpDef flatten_op();
OpDef activation_op();
OpDef add_op();
OpDef concat_op();
OpDef layer_norm_op();
OpDef embedding_op();
OpDef attention_op();
OpDef batch_norm_op();

namespace {

const std::vector<OpDef>& registry() {
  static const std::vector<OpDef> ops{linear_op(), conv2d_op(),     max_pool_op(), avg_pool_op(),
                                      flatten_op(), activation_op(), add_op(),      concat_op(),
                                      layer_norm_op(), embedding_op(), attention_op(), batch_norm_op()};
  return ops;
}

}  // namespace

const OpDef* find_op(const std::string& name) {
  for (const OpDef& d : registry())
    if (d.name == name) return &d;
  return nullptr;
}

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const OpDef& d : registry()) names.push_back(d.name);
  return names;
}

}  // namespace vkamp::graph
