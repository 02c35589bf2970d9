#include "vkamp/graph/frozen_store.hpp"

#include <algorithm>

#include "param_init.hpp"
#include "vkamp/error.hpp"

namespace vkamp::graph {

FrozenStore::FrozenStore(Context& ctx, const Graph& g, Format fmt, uint64_t seed)
    : fmt_(fmt), tensors_(layout_frozen(g, &total_)), graph_index_(g.frozen_indices()) {
  values_ = std::make_unique<Buffer>(ctx, std::max<size_t>(size_t(total_) * format_bytes(fmt), 4));
  values_->fill(0);  // padding
  for (size_t i = 0; i < tensors_.size(); ++i) {
    std::mt19937_64 gen(seed ^ (0x9E3779B97F4A7C15ull * (i + 1)));
    write(tensors_[i].name, initial_values(g.tensors()[graph_index_[i]], gen));
  }
}

uint64_t FrozenStore::count() const {
  uint64_t n = 0;
  for (const ParamTensor& t : tensors_) n += t.size;
  return n;
}

const ParamTensor& FrozenStore::of(int graph_index) const {
  auto it = std::find(graph_index_.begin(), graph_index_.end(), graph_index);
  if (it == graph_index_.end()) throw Error("FrozenStore: tensor " + std::to_string(graph_index) + " is not frozen");
  return tensors_[it - graph_index_.begin()];
}

const ParamTensor& FrozenStore::named(const std::string& name) const {
  for (const ParamTensor& t : tensors_)
    if (t.name == name) return t;
  throw Error("FrozenStore: no frozen parameter " + name);
}

BufferView FrozenStore::view(const ParamTensor& t) const {
  const size_t eb = format_bytes(fmt_);
  return BufferView(*values_, size_t(t.offset) * eb, size_t(t.size) * eb);
}

void FrozenStore::write(const std::string& name, const std::vector<float>& values) {
  const ParamTensor& t = named(name);
  if (values.size() != t.size)
    throw Error("FrozenStore: " + std::to_string(values.size()) + " values for " + name + " of " + std::to_string(t.size));
  const std::vector<uint8_t> bytes = pack(fmt_, values);
  values_->write(bytes.data(), bytes.size(), size_t(t.offset) * format_bytes(fmt_));
}

std::vector<float> FrozenStore::read(const std::string& name) const {
  const ParamTensor& t = named(name);
  std::vector<uint8_t> bytes(size_t(t.size) * format_bytes(fmt_));
  values_->read(bytes.data(), bytes.size(), size_t(t.offset) * format_bytes(fmt_));
  return unpack(fmt_, bytes);
}

}  // namespace vkamp::graph
