#include "vkamp/train/model.hpp"

#include <cmath>
#include <random>
#include <sstream>

#include "vkamp/error.hpp"
#include "vkamp/ops/bias.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/train/config.hpp"

namespace vkamp::train {

ModelSpec parse_model(const std::string& s) {
  ModelSpec spec;
  std::stringstream in(s);
  std::string part;
  bool first = true;
  while (std::getline(in, part, '-')) {
    if (part.empty()) throw ConfigError("model \"" + s + "\": empty layer");
    LayerSpec l;
    char last = part.back();
    if (last == 'r' || last == 'g' || last == 't') {
      l.activate = true;
      l.act = last == 'r' ? ops::Activation::ReLU : last == 'g' ? ops::Activation::GELU : ops::Activation::Tanh;
      part.pop_back();
    }
    char* end = nullptr;
    unsigned long w = std::strtoul(part.c_str(), &end, 10);
    if (part.empty() || *end || w == 0 || w > (1u << 20))
      throw ConfigError("model \"" + s + "\": bad width \"" + part + "\"");
    if (first) {
      if (l.activate) throw ConfigError("model \"" + s + "\": the input width takes no activation");
      spec.inputs = uint32_t(w);
      first = false;
    } else {
      l.out = uint32_t(w);
      spec.layers.push_back(l);
    }
  }
  if (spec.layers.empty()) throw ConfigError("model \"" + s + "\": needs at least one layer");
  return spec;
}

std::string describe(const ModelSpec& spec) {
  std::string s = std::to_string(spec.inputs);
  for (auto& l : spec.layers) {
    s += "-" + std::to_string(l.out);
    if (l.activate) s += std::string(1, ops::activation_name(l.act)[0]);
  }
  return s;
}

Model::Model(Context& ctx, const ModelSpec& spec, Format fmt, uint32_t max_rows, uint64_t seed,
             bool moments1, bool moments2)
    : ctx_(ctx), spec_(spec), fmt_(fmt), max_rows_(max_rows) {
  uint32_t in = spec.inputs;
  for (size_t l = 0; l < spec.layers.size(); ++l) {
    uint32_t out = spec.layers[l].out;
    std::string name = "fc" + std::to_string(l + 1);
    for (auto [suffix, size] : {std::pair{".weight", out * in}, std::pair{".bias", out}}) {
      tensors_.push_back({name + suffix, total_, size});
      total_ += (size + kParamAlign - 1) / kParamAlign * kParamAlign;
    }
    in = out;
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
  // zero weights; zero biases.
  std::mt19937_64 gen(seed);
  std::vector<float> w(total_, 0.0f);
  in = spec.inputs;
  for (size_t l = 0; l < spec.layers.size(); ++l) {
    uint32_t out = spec.layers[l].out;
    double bound = spec.init == Init::Kaiming  ? std::sqrt(6.0 / in)
                   : spec.init == Init::Xavier ? std::sqrt(6.0 / (in + out))
                                               : 0.0;
    std::uniform_real_distribution<double> dist(-bound, bound);
    const ParamTensor& t = tensors_[2 * l];
    if (bound > 0)
      for (uint32_t i = 0; i < t.size; ++i) w[t.offset + i] = float(dist(gen));
    in = out;
  }
  write_master(w);

  for (auto& l : spec.layers) {
    size_t bytes = size_t(max_rows) * l.out * eb;
    z_.push_back(std::make_unique<Buffer>(ctx, bytes));
    a_.push_back(l.activate ? std::make_unique<Buffer>(ctx, bytes) : nullptr);
    da_.push_back(std::make_unique<Buffer>(ctx, bytes));
  }
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

void Model::record_forward(Sequence& seq, BufferView x, uint32_t rows) {
  if (rows > max_rows_) throw Error("Model: " + std::to_string(rows) + " rows > " + std::to_string(max_rows_));
  uint32_t in = spec_.inputs;
  BufferView input = x;
  for (size_t l = 0; l < spec_.layers.size(); ++l) {
    const LayerSpec& L = spec_.layers[l];
    ops::linear_forward(seq, fmt_, input, view(*working_, tensors_[2 * l]), *z_[l], rows, in, L.out);
    ops::bias_add_forward(seq, fmt_, *z_[l], view(*working_, tensors_[2 * l + 1]), rows, L.out);
    if (L.activate) ops::activation_forward(seq, fmt_, L.act, *z_[l], *a_[l], rows * L.out);
    input = L.activate ? BufferView(*a_[l]) : BufferView(*z_[l]);
    in = L.out;
  }
}

void Model::record_backward(Sequence& seq, BufferView x, uint32_t rows, bool accumulate) {
  for (size_t l = spec_.layers.size(); l-- > 0;) {
    const LayerSpec& L = spec_.layers[l];
    uint32_t in = l == 0 ? spec_.inputs : spec_.layers[l - 1].out;
    Buffer& dz = *da_[l];  // dA becomes dZ in place
    if (L.activate) ops::activation_backward(seq, fmt_, L.act, *z_[l], dz, dz, rows * L.out);
    BufferView input = l == 0 ? x : (spec_.layers[l - 1].activate ? BufferView(*a_[l - 1]) : BufferView(*z_[l - 1]));
    ops::linear_backward_weight(seq, fmt_, dz, input, view(*grads_, tensors_[2 * l]), rows, in, L.out, accumulate);
    ops::bias_add_backward(seq, fmt_, dz, view(*grads_, tensors_[2 * l + 1]), rows, L.out, accumulate);
    if (l > 0) ops::linear_backward_input(seq, fmt_, dz, view(*working_, tensors_[2 * l]), *da_[l - 1], rows, in, L.out);
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
