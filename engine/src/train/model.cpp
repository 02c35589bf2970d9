#include "vkamp/train/model.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "vkamp/error.hpp"
#include "vkamp/ops/bias.hpp"
#include "vkamp/ops/gemm.hpp"

namespace vkamp::train {
namespace {

// Element counts go to the ops as 32-bit values.
uint32_t checked(uint64_t n, const std::string& what) {
  if (n > 0xFFFFFFFFull) throw Error("Model: " + what + " has " + std::to_string(n) + " elements, over 2^32");
  return uint32_t(n);
}

// Fan-in and fan-out of a layer's weight, for the initialisation bounds.
std::pair<double, double> fans(const LayerSpec& L, const Shape& in) {
  if (L.kind == LayerKind::Conv2d) {
    double field = double(L.kernel) * L.kernel;
    return {field * in.c, field * L.out};
  }
  return {double(in.elements()), double(L.out)};
}

}  // namespace

Model::Model(Context& ctx, const ModelSpec& spec, Format fmt, uint32_t max_rows, uint64_t seed,
             bool moments1, bool moments2)
    : ctx_(ctx), spec_(spec), shapes_(layer_shapes(spec)), fmt_(fmt), max_rows_(max_rows) {
  tensors_ = param_layout(spec, &total_);
  int first_params = -1, params_seen = 0;
  for (size_t l = 0; l < spec.layers.size(); ++l) {
    Layer L;
    L.spec = spec.layers[l];
    L.in = shapes_[l];
    L.out = shapes_[l + 1];
    L.needs_dx = first_params >= 0;
    L.owner = L.spec.kind == LayerKind::Flatten ? (l == 0 ? -1 : layers_[l - 1].owner) : int(l);
    if (L.spec.has_params()) {
      L.weight = 2 * params_seen++;  // param_layout: a weight then its bias per layer
      if (first_params < 0) first_params = int(l);
    }
    layers_.push_back(std::move(L));
  }

  size_t eb = format_bytes(fmt);
  master_ = std::make_unique<Buffer>(ctx, size_t(total_) * 4);
  working_ = std::make_unique<Buffer>(ctx, size_t(total_) * eb);
  grads_ = std::make_unique<Buffer>(ctx, size_t(total_) * eb);
  grads_->fill(0);  // padding between tensors stays zero for the AMP pass
  m1_ = std::make_unique<Buffer>(ctx, moments1 ? size_t(total_) * 4 : 4);
  m2_ = std::make_unique<Buffer>(ctx, moments2 ? size_t(total_) * 4 : 4);
  m1_->fill(0);
  m2_->fill(0);

  // Seeded initialisation: Kaiming-uniform (ReLU nets), Xavier-uniform or
  // zero weights; zero biases. Fan-in is in_c * k * k for a conv.
  std::mt19937_64 gen(seed);
  std::vector<float> w(total_, 0.0f);
  for (const Layer& L : layers_) {
    if (L.weight < 0) continue;
    auto [fan_in, fan_out] = fans(L.spec, L.in);
    double bound = spec.init == Init::Kaiming  ? std::sqrt(6.0 / fan_in)
                   : spec.init == Init::Xavier ? std::sqrt(6.0 / (fan_in + fan_out))
                                               : 0.0;
    std::uniform_real_distribution<double> dist(-bound, bound);
    const ParamTensor& t = tensors_[L.weight];
    if (bound > 0)
      for (uint32_t i = 0; i < t.size; ++i) w[t.offset + i] = float(dist(gen));
  }
  write_master(w);

  // Activations: every layer but Flatten owns its output; gradients exist
  // from the first layer with parameters on (nothing flows back past it).
  uint64_t dcol_elements = 0;
  for (size_t l = 0; l < layers_.size(); ++l) {
    Layer& L = layers_[l];
    if (L.spec.kind == LayerKind::Flatten) continue;
    std::string name = "layer " + std::to_string(l + 1);
    size_t bytes = size_t(checked(uint64_t(max_rows) * L.out.elements(), name + " output")) * eb;
    L.z = std::make_unique<Buffer>(ctx, bytes);
    if (L.spec.activate) L.a = std::make_unique<Buffer>(ctx, bytes);
    if (first_params >= 0 && int(l) >= first_params) L.dy = std::make_unique<Buffer>(ctx, bytes);
    if (L.spec.kind == LayerKind::Conv2d) {
      ops::Conv2d c = conv_of(L, max_rows);
      ops::validate(c);
      uint64_t n = checked(c.col_elements(), name + " im2col");
      L.col = std::make_unique<Buffer>(ctx, size_t(n) * eb);
      if (L.needs_dx) dcol_elements = std::max(dcol_elements, n);
    }
    if (L.spec.kind == LayerKind::MaxPool || L.spec.kind == LayerKind::AvgPool) ops::validate(pool_of(L, max_rows));
  }
  if (dcol_elements) dcol_ = std::make_unique<Buffer>(ctx, size_t(dcol_elements) * eb);
}

uint64_t Model::param_count() const {
  uint64_t n = 0;
  for (auto& t : tensors_) n += t.size;
  return n;
}

BufferView Model::view(Buffer& b, const ParamTensor& t) const {
  size_t eb = b.bytes() / total_;
  return BufferView(b, size_t(t.offset) * eb, size_t(t.size) * eb);
}

BufferView Model::output_of(int owner, BufferView x) const {
  if (owner < 0) return x;
  const Layer& L = layers_[owner];
  return L.a ? BufferView(*L.a) : BufferView(*L.z);
}

Buffer& Model::grad_of(int owner) {
  if (owner < 0 || !layers_[owner].dy) throw Error("Model: no gradient buffer for layer " + std::to_string(owner + 1));
  return *layers_[owner].dy;
}

Buffer& Model::output() {
  const Layer& L = layers_[layers_.back().owner];  // never -1: the model has a layer with parameters
  return L.a ? *L.a : *L.z;
}

Buffer& Model::doutput() { return grad_of(layers_.back().owner); }

ops::Conv2d Model::conv_of(const Layer& L, uint32_t rows) const {
  ops::Conv2d c;
  c.batch = rows;
  c.in_h = L.in.h;
  c.in_w = L.in.w;
  c.in_c = L.in.c;
  c.out_c = L.spec.out;
  c.kernel = L.spec.kernel;
  c.stride = L.spec.stride;
  c.pad = L.spec.pad;
  return c;
}

ops::Pool2d Model::pool_of(const Layer& L, uint32_t rows) const {
  ops::Pool2d p;
  p.kind = L.spec.kind == LayerKind::MaxPool ? ops::PoolKind::Max : ops::PoolKind::Average;
  p.batch = rows;
  p.in_h = L.in.h;
  p.in_w = L.in.w;
  p.channels = L.in.c;
  p.window = L.spec.kernel;
  p.stride = L.spec.stride;
  return p;
}

void Model::record_forward(Sequence& seq, BufferView x, uint32_t rows) {
  if (rows > max_rows_) throw Error("Model: " + std::to_string(rows) + " rows > " + std::to_string(max_rows_));
  for (size_t l = 0; l < layers_.size(); ++l) {
    Layer& L = layers_[l];
    BufferView in = output_of(l == 0 ? -1 : layers_[l - 1].owner, x);
    switch (L.spec.kind) {
      case LayerKind::Linear:
        ops::linear_forward(seq, fmt_, in, view(*working_, tensors_[L.weight]), *L.z, rows, L.in.elements(),
                            L.spec.out);
        ops::bias_add_forward(seq, fmt_, *L.z, view(*working_, tensors_[L.weight + 1]), rows, L.spec.out);
        break;
      case LayerKind::Conv2d:
        ops::conv2d_forward(seq, fmt_, conv_of(L, rows), in, view(*working_, tensors_[L.weight]),
                            view(*working_, tensors_[L.weight + 1]), *L.col, *L.z);
        break;
      case LayerKind::MaxPool:
      case LayerKind::AvgPool: ops::pool2d_forward(seq, fmt_, pool_of(L, rows), in, *L.z); break;
      case LayerKind::Flatten: break;  // the same bytes, read as rows x (h*w*c)
    }
    if (L.spec.activate) ops::activation_forward(seq, fmt_, L.spec.act, *L.z, *L.a, rows * L.out.elements());
  }
}

void Model::record_backward(Sequence& seq, BufferView x, uint32_t rows, bool accumulate) {
  for (size_t l = layers_.size(); l-- > 0;) {
    Layer& L = layers_[l];
    if (L.spec.kind == LayerKind::Flatten || (!L.spec.has_params() && !L.needs_dx)) continue;
    Buffer& dz = *L.dy;  // dA becomes dZ in place
    if (L.spec.activate) ops::activation_backward(seq, fmt_, L.spec.act, *L.z, dz, dz, rows * L.out.elements());
    int src = l == 0 ? -1 : layers_[l - 1].owner;
    BufferView in = output_of(src, x);
    switch (L.spec.kind) {
      case LayerKind::Linear: {
        uint32_t n_in = L.in.elements(), n_out = L.spec.out;
        ops::linear_backward_weight(seq, fmt_, dz, in, view(*grads_, tensors_[L.weight]), rows, n_in, n_out,
                                    accumulate);
        ops::bias_add_backward(seq, fmt_, dz, view(*grads_, tensors_[L.weight + 1]), rows, n_out, accumulate);
        if (L.needs_dx)
          ops::linear_backward_input(seq, fmt_, dz, view(*working_, tensors_[L.weight]), grad_of(src), rows, n_in,
                                     n_out);
        break;
      }
      case LayerKind::Conv2d: {
        BufferView dcol = dcol_ ? BufferView(*dcol_) : BufferView(dz);
        BufferView dx = L.needs_dx ? BufferView(grad_of(src)) : BufferView(dz);
        ops::conv2d_backward(seq, fmt_, conv_of(L, rows), dz, *L.col, view(*working_, tensors_[L.weight]),
                             view(*grads_, tensors_[L.weight]), view(*grads_, tensors_[L.weight + 1]), accumulate,
                             L.needs_dx ? &dcol : nullptr, L.needs_dx ? &dx : nullptr);
        break;
      }
      case LayerKind::MaxPool:
      case LayerKind::AvgPool: ops::pool2d_backward(seq, fmt_, pool_of(L, rows), in, dz, grad_of(src)); break;
      case LayerKind::Flatten: break;
    }
  }
}

std::vector<float> Model::read_master() const {
  std::vector<float> w(total_);
  master_->read(w.data(), w.size() * 4);
  return w;
}

void Model::write_master(const std::vector<float>& w) {
  if (w.size() != total_) throw Error("Model::write_master: wrong parameter count");
  master_->write(w);
  auto bytes = pack(fmt_, w);  // the same rounding as the optimizer's store
  working_->write(bytes.data(), bytes.size());
}

}  // namespace vkamp::train
