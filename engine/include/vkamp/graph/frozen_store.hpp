// A graph's frozen parameters on the device (TensorKind::Frozen: a
// fine-tune's base weights): one flat buffer in the run's storage format,
// laid out like the parameters (declaration order, aligned offsets), and
// nothing else: no fp32 master, no gradient, no optimizer state. Filled
// tensor by tensor, so a checkpoint is never held in host memory whole.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/graph/graph.hpp"
#include "vkamp/graph/param_layout.hpp"

namespace vkamp::graph {

class FrozenStore {
 public:
  // Each tensor starts at its Init, drawn from its own generator seeded by
  // `seed` and its position (a 1B-parameter base is drawn a tensor at a time).
  FrozenStore(Context& ctx, const Graph& g, Format fmt, uint64_t seed);

  const std::vector<ParamTensor>& tensors() const { return tensors_; }
  const Buffer& values() const { return *values_; }  // the flat buffer, laid out as tensors()
  bool empty() const { return tensors_.empty(); }
  uint64_t count() const;  // real elements
  uint64_t bytes() const { return empty() ? 0 : values_->bytes(); }
  const ParamTensor& of(int graph_index) const;
  BufferView view(const ParamTensor& t) const;
  // Tensor `name`'s values, rounded to the format; vkamp::Error for an
  // unknown name or the wrong count.
  void write(const std::string& name, const std::vector<float>& values);
  std::vector<float> read(const std::string& name) const;

 private:
  const ParamTensor& named(const std::string& name) const;

  Format fmt_;
  uint32_t total_ = 0;
  std::vector<ParamTensor> tensors_;
  std::vector<int> graph_index_;
  std::unique_ptr<Buffer> values_;
};

}  // namespace vkamp::graph
