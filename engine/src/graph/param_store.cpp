#include "vkamp/graph/param_store.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "vkamp/error.hpp"

namespace vkamp::graph {
namespace {

// The uniform bound of a parameter's initialisation. Fans as PyTorch takes
// them: a weight is {out, receptive field..., in}, so fan-in is everything
// but the first dim and fan-out everything but the last.
double init_bound(const Tensor& t) {
  if (t.init != Init::Kaiming && t.init != Init::Xavier) return 0.0;
  if (t.dims.size() < 2) return 0.0;
  double field = 1;
  for (size_t i = 1; i + 1 < t.dims.size(); ++i) field *= t.dims[i];
  double fan_in = field * t.dims.back(), fan_out = field * t.dims.front();
  return t.init == Init::Kaiming ? std::sqrt(6.0 / fan_in) : std::sqrt(6.0 / (fan_in + fan_out));
}

}  // namespace

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
    if (g.tensors()[graph_index_[p]].init == Init::One)
      std::fill_n(w.begin() + tensors_[p].offset, tensors_[p].size, 1.0f);
    const Tensor& t = g.tensors()[graph_index_[p]];
    if (t.init == Init::Normal) {
      std::normal_distribution<double> dist(0.0, t.init_std);
      for (uint32_t i = 0; i < tensors_[p].size; ++i) w[tensors_[p].offset + i] = float(dist(gen));
      continue;
    }
    double bound = init_bound(t);
    if (bound <= 0) continue;
    std::uniform_real_distribution<double> dist(-bound, bound);
    for (uint32_t i = 0; i < tensors_[p].size; ++i) w[tensors_[p].offset + i] = float(dist(gen));
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
