// Where each parameter of a graph lives in the flat parameter buffers
// (masters, working copy, gradients, moments): in declaration order, each
// tensor's offset aligned so that every view meets any device's
// minStorageBufferOffsetAlignment (at most 256 bytes), padding left zero.
// One layout per kind whatever the graph, so the AMP pass and the
// optimizer each stay one dispatch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vkamp/buffer.hpp"

namespace vkamp::graph {

class Graph;

inline constexpr uint32_t kParamTensorAlign = 128;

struct ParamTensor {
  std::string name;     // "fc1.weight"
  uint32_t offset = 0;  // elements; a multiple of kParamTensorAlign
  uint32_t size = 0;
  bool matrix = false;  // 2 or more dims (a weight or an embedding; not a bias or a norm's gain)
};

// *padded_total (when given) is the padded element count. Throws
// vkamp::Error when the total does not fit in 32 bits.
std::vector<ParamTensor> layout_params(const Graph& g, uint32_t* padded_total = nullptr);
// The same layout for the graph's buffers (TensorKind::Buffer), in their own
// flat fp32 buffer (buffer_store.hpp).
std::vector<ParamTensor> layout_buffers(const Graph& g, uint32_t* padded_total = nullptr);
// And for the frozen parameters (TensorKind::Frozen, frozen_store.hpp).
std::vector<ParamTensor> layout_frozen(const Graph& g, uint32_t* padded_total = nullptr);

// Tensor `name`'s part of a flat buffer of elements of `element_bytes`
// laid out as `tensors`; vkamp::Error naming `who` when it has none.
BufferView tensor_view(const Buffer& flat, size_t element_bytes, const std::vector<ParamTensor>& tensors,
                       const std::string& name, const std::string& who);

}  // namespace vkamp::graph
