// A graph's buffers on the device (TensorKind::Buffer: BatchNorm's running
// statistics): one flat fp32 buffer beside the parameters, laid out like
// them (declaration order, offsets aligned to kParamTensorAlign elements so
// every view meets any device's storage offset alignment), and started at
// each buffer's Init (0 or 1). Not trained: only an op's commit in the
// step's update pass writes them.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/graph/graph.hpp"
#include "vkamp/graph/param_layout.hpp"

namespace vkamp::graph {

class BufferStore {
 public:
  BufferStore(Context& ctx, const Graph& g);

  // Name, offset and size of each buffer (ParamTensor's fields; matrix unused).
  const std::vector<ParamTensor>& tensors() const { return tensors_; }
  uint32_t padded_elements() const { return total_; }
  bool empty() const { return tensors_.empty(); }
  // The layout entry of the graph's tensor `graph_index` (a Buffer).
  const ParamTensor& of(int graph_index) const;
  BufferView view(const ParamTensor& t) const;
  Buffer& values() { return *values_; }
  uint64_t bytes() const { return uint64_t(total_) * 4; }  // 0 without buffers

  // Host copies of the whole flat buffer (padding included).
  std::vector<float> read() const;
  void write(const std::vector<float>& v);

 private:
  uint32_t total_ = 0;
  std::vector<ParamTensor> tensors_;
  std::vector<int> graph_index_;
  std::unique_ptr<Buffer> values_;
};

}  // namespace vkamp::graph
