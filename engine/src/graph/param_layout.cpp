#include "vkamp/graph/param_layout.hpp"

#include "vkamp/error.hpp"
#include "vkamp/graph/graph.hpp"

namespace vkamp::graph {

namespace {

std::vector<ParamTensor> layout(const Graph& g, const std::vector<int>& indices, const char* what,
                                uint32_t* padded_total) {
  std::vector<ParamTensor> out;
  uint64_t total = 0;
  for (int i : indices) {
    const Tensor& t = g.tensors()[i];
    out.push_back({t.name, uint32_t(total), uint32_t(elements(t)), t.dims.size() >= 2});
    total += (elements(t) + kParamTensorAlign - 1) / kParamTensorAlign * kParamTensorAlign;
    if (total > 0xFFFFFFFFull)
      throw Error(std::string("Model: the ") + what + " have " + std::to_string(total) + " elements, over 2^32");
  }
  if (padded_total) *padded_total = uint32_t(total);
  return out;
}

}  // namespace

std::vector<ParamTensor> layout_params(const Graph& g, uint32_t* padded_total) {
  return layout(g, g.param_indices(), "parameters", padded_total);
}

std::vector<ParamTensor> layout_frozen(const Graph& g, uint32_t* padded_total) {
  return layout(g, g.frozen_indices(), "frozen parameters", padded_total);
}

std::vector<ParamTensor> layout_buffers(const Graph& g, uint32_t* padded_total) {
  return layout(g, g.buffer_indices(), "buffers", padded_total);
}

BufferView tensor_view(const Buffer& flat, size_t element_bytes, const std::vector<ParamTensor>& tensors,
                       const std::string& name, const std::string& who) {
  for (const ParamTensor& t : tensors)
    if (t.name == name) return BufferView(flat, size_t(t.offset) * element_bytes, size_t(t.size) * element_bytes);
  throw Error(who + ": the parameters have no " + name);
}

}  // namespace vkamp::graph
