// A graph's frozen parameters on the device (TensorKind::Frozen: a
// fine-tune's base weights) in the run's storage format or in ggml blocks
// (Tensor::blocks: a quantized base), and nothing else:
// no fp32 master, no gradient, no optimizer state. Tensors are placed in
// declaration order in blocks the device allows (device_blocks.hpp), each
// inside one block, and filled tensor by tensor, so a checkpoint is never
// held in host memory whole.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/device_blocks.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/graph/graph.hpp"

namespace vkamp::graph {

struct FrozenTensor {
  std::string name;
  uint64_t offset = 0;  // bytes, in the store's blocks
  uint64_t size = 0;    // elements
  std::optional<quant::GgmlType> blocks;  // held in ggml blocks (Tensor::blocks), else the store's format
  uint64_t bytes = 0;
  uint64_t row = 0;  // elements a row holds (the fastest dimension)
};

class FrozenStore {
 public:
  // Where each tensor goes and the end of the last: a plan, nothing allocated.
  static std::vector<FrozenTensor> layout(const Graph& g, Format fmt, const BlockLayout& blocks, uint64_t* end);
  // Each tensor starts at its Init, drawn from its own generator seeded by
  // `seed` and its position (a 1B-parameter base is drawn a tensor at a time).
  FrozenStore(Context& ctx, const Graph& g, Format fmt, uint64_t seed);

  const std::vector<FrozenTensor>& tensors() const { return tensors_; }
  bool empty() const { return tensors_.empty(); }
  uint64_t count() const;  // real elements
  uint64_t bytes() const { return values_ ? values_->bytes() : 0; }
  const FrozenTensor& of(int graph_index) const;
  // The tensor called `name`; vkamp::Error where there is none.
  const FrozenTensor& named(const std::string& name) const;
  BufferView view(const FrozenTensor& t) const;
  BufferView view(const std::string& name) const { return view(named(name)); }
  // Tensor `name`'s values, rounded to the format; vkamp::Error for an
  // unknown name or the wrong count.
  void write(const std::string& name, const std::vector<float>& values);
  // Its elements from `first` on (a slice, as a checkpoint is loaded);
  // vkamp::Error past its end.
  void write_slice(const std::string& name, uint64_t first, const std::vector<float>& values);
  // Rows of a tensor held in blocks, as the file holds them: `bytes` from
  // the start of row `first_row`; vkamp::Error for a tensor in the store's
  // format or past its end.
  void write_blocks(const std::string& name, uint64_t first_row, const uint8_t* bytes, uint64_t n);
  // Its values (dequantized, for a tensor held in blocks).
  std::vector<float> read(const std::string& name) const;

 private:
  void write_initial_blocks(const Tensor& t, std::mt19937_64& gen);

  Format fmt_;
  std::vector<FrozenTensor> tensors_;
  std::vector<int> graph_index_;
  std::unique_ptr<DeviceBlocks> values_;
};

}  // namespace vkamp::graph
