#include "vkamp/graph/param_layout.hpp"

#include "vkamp/error.hpp"
#include "vkamp/graph/graph.hpp"

namespace vkamp::graph {

std::vector<ParamTensor> layout_params(const Graph& g, uint32_t* padded_total) {
  std::vector<ParamTensor> out;
  uint64_t total = 0;
  for (int i : g.param_indices()) {
    const Tensor& t = g.tensors()[i];
    out.push_back({t.name, uint32_t(total), uint32_t(elements(t)), t.dims.size() >= 2});
    total += (elements(t) + kParamTensorAlign - 1) / kParamTensorAlign * kParamTensorAlign;
    if (total > 0xFFFFFFFFull)
      throw Error("Model: the parameters have " + std::to_string(total) + " elements, over 2^32");
  }
  if (padded_total) *padded_total = uint32_t(total);
  return out;
}

}  // namespace vkamp::graph
