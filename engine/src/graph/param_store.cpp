#include "vkamp/graph/param_store.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "param_init.hpp"
#include "vkamp/error.hpp"

namespace vkamp::graph {

ParamStore::ParamStore(Context& ctx, const Graph& g, Format fmt, uint64_t seed, bool moments1, bool moments2)
    : fmt_(fmt), tensors_(layout_params(g, &total_)), graph_index_(g.param_indices()) {
  size_t eb = format_bytes(fmt);
  master_ = std::make_unique<Buffer>(ctx, std::max<size_t>(size_t(total_) * 4, 4));
  working_ = std::make_unique<Buffer>(ctx, std::max<size_t>(size_t(total_) * eb, 4));
  grads_ = std::make_unique<Buffer>(ctx, std::max<size_t>(size_t(total_) * eb, 4));
  grads_->fill(0);  // padding between tensors stays zero for the AMP pass
  m1_ = std::make_unique<Buffer>(ctx, moments1 ? size_t(total_) * 4 : 4);
  m2_ = std::make_unique<Buffer>(ctx, moments2 ? size_t(total_) * 4 : 4);
  m1_->fill(0);
  m2_->fill(0);

  // Seeded, in declaration order; a constant tensor (0 or 1) draws nothing.
  std::mt19937_64 gen(seed);
  std::vector<float> w(total_, 0.0f);
  for (size_t p = 0; p < tensors_.size(); ++p) {
    const std::vector<float> v = initial_values(g.tensors()[graph_index_[p]], gen);
    std::copy(v.begin(), v.end(), w.begin() + tensors_[p].offset);
  }
  write_master(w);
}

uint64_t ParamStore::count() const {
  uint64_t n = 0;
  for (const ParamTensor& t : tensors_) n += t.size;
  return n;
}

const ParamTensor& ParamStore::of(int graph_index) const {
  auto it = std::find(graph_index_.begin(), graph_index_.end(), graph_index);
  if (it == graph_index_.end()) throw Error("ParamStore: tensor " + std::to_string(graph_index) + " is no parameter");
  return tensors_[it - graph_index_.begin()];
}

BufferView ParamStore::view(Buffer& b, const ParamTensor& t) const {
  size_t eb = b.bytes() / total_;
  return BufferView(b, size_t(t.offset) * eb, size_t(t.size) * eb);
}

std::vector<float> ParamStore::read_master() const {
  std::vector<float> w(total_);
  master_->read(w.data(), w.size() * 4);
  return w;
}

void ParamStore::write_master(const std::vector<float>& w) {
  if (w.size() != total_) throw Error("Model::write_master: wrong parameter count");
  master_->write(w);
  auto bytes = pack(fmt_, w);
  working_->write(bytes.data(), bytes.size());
}

}  // namespace vkamp::graph
