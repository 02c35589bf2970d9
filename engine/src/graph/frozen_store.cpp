#include "vkamp/graph/frozen_store.hpp"

#include <algorithm>

#include "param_init.hpp"
#include "vkamp/error.hpp"

namespace vkamp::graph {

std::vector<FrozenTensor> FrozenStore::layout(const Graph& g, Format fmt, const BlockLayout& blocks, uint64_t* end) {
  std::vector<FrozenTensor> out;
  *end = 0;
  for (int i : g.frozen_indices()) {
    const Tensor& t = g.tensors()[i];
    const uint64_t n = elements(t);
    out.push_back({t.name, blocks.append(*end, n * format_bytes(fmt), "the frozen tensor " + t.name), n});
  }
  return out;
}

FrozenStore::FrozenStore(Context& ctx, const Graph& g, Format fmt, uint64_t seed)
    : fmt_(fmt), graph_index_(g.frozen_indices()) {
  const BlockLayout blocks = BlockLayout::of(ctx);
  uint64_t end = 0;
  tensors_ = layout(g, fmt, blocks, &end);
  if (tensors_.empty()) return;
  values_ = std::make_unique<DeviceBlocks>(ctx, blocks, end, "the frozen base");
  values_->fill(0);  // padding
  for (size_t i = 0; i < tensors_.size(); ++i) {
    std::mt19937_64 gen(seed ^ (0x9E3779B97F4A7C15ull * (i + 1)));
    write(tensors_[i].name, initial_values(g.tensors()[graph_index_[i]], gen));
  }
}

uint64_t FrozenStore::count() const {
  uint64_t n = 0;
  for (const FrozenTensor& t : tensors_) n += t.size;
  return n;
}

const FrozenTensor& FrozenStore::of(int graph_index) const {
  auto it = std::find(graph_index_.begin(), graph_index_.end(), graph_index);
  if (it == graph_index_.end()) throw Error("FrozenStore: tensor " + std::to_string(graph_index) + " is not frozen");
  return tensors_[it - graph_index_.begin()];
}

const FrozenTensor& FrozenStore::named(const std::string& name) const {
  for (const FrozenTensor& t : tensors_)
    if (t.name == name) return t;
  throw Error("FrozenStore: no frozen parameter " + name);
}

BufferView FrozenStore::view(const FrozenTensor& t) const {
  return values_->view(t.offset, t.size * format_bytes(fmt_));
}

void FrozenStore::write(const std::string& name, const std::vector<float>& values) {
  const FrozenTensor& t = named(name);
  if (values.size() != t.size)
    throw Error("FrozenStore: " + std::to_string(values.size()) + " values for " + name + " of " + std::to_string(t.size));
  write_slice(name, 0, values);
}

void FrozenStore::write_slice(const std::string& name, uint64_t first, const std::vector<float>& values) {
  const FrozenTensor& t = named(name);
  if (first > t.size || values.size() > t.size - first)
    throw Error("FrozenStore: " + std::to_string(values.size()) + " values from element " + std::to_string(first) +
                " of " + name + ", which has " + std::to_string(t.size));
  const std::vector<uint8_t> bytes = pack(fmt_, values);
  values_->write(t.offset + first * format_bytes(fmt_), bytes.data(), bytes.size());
}

std::vector<float> FrozenStore::read(const std::string& name) const {
  const FrozenTensor& t = named(name);
  std::vector<uint8_t> bytes(t.size * format_bytes(fmt_));
  values_->read(t.offset, bytes.data(), bytes.size());
  return unpack(fmt_, bytes);
}

}  // namespace vkamp::graph
