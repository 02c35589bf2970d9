#include "vkamp/models/param_layout.hpp"

namespace vkamp::models {

// The graph's layout is the one definition; a spec is laid out as its graph.
std::vector<ParamTensor> param_layout(const ModelSpec& spec, uint32_t* padded_total) {
  return graph::layout_params(build_graph(spec), padded_total);
}

}  // namespace vkamp::models
