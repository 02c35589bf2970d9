#include "vkamp/graph/buffer_store.hpp"

#include <algorithm>

#include "vkamp/error.hpp"

namespace vkamp::graph {

BufferStore::BufferStore(Context& ctx, const Graph& g)
    : tensors_(layout_buffers(g, &total_)), graph_index_(g.buffer_indices()) {
  values_ = std::make_unique<Buffer>(ctx, std::max<size_t>(size_t(total_) * 4, 4));
  std::vector<float> v(total_, 0.0f);
  for (size_t b = 0; b < tensors_.size(); ++b)
    if (g.tensors()[graph_index_[b]].init == Init::One) std::fill_n(v.begin() + tensors_[b].offset, tensors_[b].size, 1.0f);
  write(v);
}

const ParamTensor& BufferStore::of(int graph_index) const {
  auto it = std::find(graph_index_.begin(), graph_index_.end(), graph_index);
  if (it == graph_index_.end()) throw Error("BufferStore: tensor " + std::to_string(graph_index) + " is no buffer");
  return tensors_[it - graph_index_.begin()];
}

BufferView BufferStore::view(const ParamTensor& t) const {
  return BufferView(*values_, size_t(t.offset) * 4, size_t(t.size) * 4);
}

std::vector<float> BufferStore::read() const {
  std::vector<float> v(total_);
  if (total_) values_->read(v.data(), v.size() * 4);
  return v;
}

void BufferStore::write(const std::vector<float>& v) {
  if (v.size() != total_) throw Error("BufferStore::write: " + std::to_string(v.size()) + " values for " +
                                      std::to_string(total_));
  if (total_) values_->write(v);
}

}  // namespace vkamp::graph
