// vkamp's flat parameter layout to and from PyTorch's state_dict layout.
// Each PyTorch tensor is described by its shape and, where the element
// orders differ, the vkamp index of every element in PyTorch order.
#include "vkamp/io/torch_layout.hpp"

#include <stdexcept>

#include "vkamp/float_formats.hpp"

namespace vkamp::io {

using graph::ParamTensor;
using graph::Shape;
using models::LayerKind;
using models::LayerSpec;
using models::ModelSpec;

namespace {

struct TorchTensor {
  ParamTensor param;
  std::vector<uint64_t> shape;
  std::vector<uint32_t> vkamp_index;  // per element in PyTorch order; empty = the same order
  bool buffer = false;                // in the buffers (BufferStore's layout), not the masters
};

// PyTorch keeps BatchNorm's counter as int64; vkamp holds it as an fp32 buffer.
bool is_counter(const TorchTensor& t) {
  const std::string suffix = ".num_batches_tracked";
  const std::string& n = t.param.name;
  return t.buffer && n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The graph's buffers (BatchNorm's running statistics): PyTorch's layout is
// their dims.
void append_buffers(const graph::Graph& g, std::vector<TorchTensor>& out, uint32_t* buffer_total) {
  const std::vector<ParamTensor> buffers = graph::layout_buffers(g, buffer_total);
  const std::vector<int> index = g.buffer_indices();
  for (size_t i = 0; i < buffers.size(); ++i) {
    const auto& dims = g.tensors()[index[i]].dims;
    out.push_back({buffers[i], std::vector<uint64_t>(dims.begin(), dims.end()), {}, true});
    if (is_counter(out.back())) out.back().shape = {};  // a 0-dim tensor in PyTorch
  }
}

// Conv2d: PyTorch [out][in][ky][kx], vkamp [out][ky][kx][in].
std::vector<uint32_t> conv_order(uint32_t out, uint32_t in, uint32_t k) {
  std::vector<uint32_t> index;
  index.reserve(size_t(out) * in * k * k);
  for (uint32_t o = 0; o < out; ++o)
    for (uint32_t i = 0; i < in; ++i)
      for (uint32_t ky = 0; ky < k; ++ky)
        for (uint32_t kx = 0; kx < k; ++kx) index.push_back(o * (k * k * in) + (ky * k + kx) * in + i);
  return index;
}

// A Linear after flattening an H x W x C image: PyTorch flattens NCHW, so
// its input columns run (c, h, w); vkamp's run (h, w, c).
std::vector<uint32_t> flattened_linear_order(uint32_t out, const Shape& image) {
  const uint32_t H = image.h, W = image.w, C = image.c, in = image.elements();
  std::vector<uint32_t> index;
  index.reserve(size_t(out) * in);
  for (uint32_t o = 0; o < out; ++o)
    for (uint32_t c = 0; c < C; ++c)
      for (uint32_t h = 0; h < H; ++h)
        for (uint32_t w = 0; w < W; ++w) index.push_back(o * in + (h * W + w) * C + c);
  return index;
}

std::vector<TorchTensor> torch_tensors(const ModelSpec& spec, uint32_t* padded_total, uint32_t* buffer_total) {
  const std::vector<ParamTensor> params = param_layout(spec, padded_total);
  const std::vector<Shape> shapes = layer_shapes(spec);
  std::vector<TorchTensor> out;
  size_t next = 0;  // param_layout: a weight then its bias per layer with parameters
  for (size_t l = 0; l < spec.layers.size(); ++l) {
    const LayerSpec& L = spec.layers[l];
    if (!L.has_params()) continue;
    const Shape& in = shapes[l];
    TorchTensor weight{params[next++], {}, {}};
    if (L.kind == LayerKind::BatchNorm) {  // weight and bias per channel or feature
      weight.shape = {in.c};
      out.push_back(std::move(weight));
      out.push_back({params[next++], {in.c}, {}});
      continue;
    }
    if (L.kind == LayerKind::Conv2d) {
      weight.shape = {L.out, in.c, L.kernel, L.kernel};
      weight.vkamp_index = conv_order(L.out, in.c, L.kernel);
    } else {
      weight.shape = {L.out, in.elements()};
      // The image a run of Flattens (and dropouts, which move no data)
      // right before this layer started from.
      size_t f = l;
      while (f > 0 && (spec.layers[f - 1].kind == LayerKind::Flatten || spec.layers[f - 1].kind == LayerKind::Dropout))
        --f;
      if (f < l && shapes[f].image && shapes[f].c > 1) weight.vkamp_index = flattened_linear_order(L.out, shapes[f]);
    }
    out.push_back(std::move(weight));
    out.push_back({params[next++], {L.out}, {}});
  }
  append_buffers(build_graph(spec), out, buffer_total);
  return out;
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Format storage_format(io::DType dtype) {
  switch (dtype) {
    case io::DType::F32: return Format::F32;
    case io::DType::F16: return Format::F16;
    case io::DType::BF16: return Format::BF16;
    default:
      throw std::invalid_argument(std::string("export_torch_tensors: cannot store weights as ") +
                                  io::dtype_name(dtype) + " (F32, F16 or BF16)");
  }
}

// A graph's parameters: every tensor as its dims, but a conv2d's weight,
// which PyTorch holds [out][in][ky][kx]. A flatten that reorders features
// (an image of several positions and channels: PyTorch flattens NCHW) would
// need the next linear's columns permuted, which only model strings do yet.
std::vector<TorchTensor> torch_tensors(const graph::Graph& g, uint32_t* padded_total, uint32_t* buffer_total) {
  std::vector<std::pair<std::string, std::vector<uint32_t>>> conv_weights;  // name, {out, k, k, in}
  for (const graph::Node& n : g.nodes()) {
    const Shape& in = g.tensor(n.inputs[0]).shape;
    if (n.op == "flatten" && in.image && in.c > 1 && in.h * in.w > 1)
      throw std::invalid_argument("model " + g.origin() + ": its flatten of a " + std::to_string(in.h) + "x" +
                                  std::to_string(in.w) + "x" + std::to_string(in.c) +
                                  " image has no PyTorch layout here yet (only model strings export one)");
    if (n.op == "conv2d") conv_weights.push_back({n.inputs[1], g.tensor(n.inputs[1]).dims});
  }
  const std::vector<ParamTensor> params = graph::layout_params(g, padded_total);
  const std::vector<int> index = g.param_indices();
  std::vector<TorchTensor> out;
  for (size_t i = 0; i < params.size(); ++i) {
    const graph::Tensor& t = g.tensors()[index[i]];
    out.push_back({params[i], std::vector<uint64_t>(t.dims.begin(), t.dims.end()), {}});
    for (const auto& [name, d] : conv_weights)
      if (name == t.name) {
        out.back().shape = {d[0], d[3], d[1], d[2]};
        out.back().vkamp_index = conv_order(d[0], d[3], d[1]);
      }
  }
  append_buffers(g, out, buffer_total);
  return out;
}

std::vector<uint8_t> int64_bytes(const std::vector<float>& values) {
  std::vector<uint8_t> out;
  for (float v : values) {
    const int64_t n = int64_t(v);
    for (int b = 0; b < 8; ++b) out.push_back(uint8_t(uint64_t(n) >> (8 * b)));
  }
  return out;
}

// A counter as PyTorch writes it (I64), or as a float tensor.
std::vector<float> counter_values(const io::Tensor& t, const std::string& label) {
  if (t.dtype != io::DType::I64 && t.dtype != io::DType::I32) return {};
  const size_t eb = io::dtype_bytes(t.dtype);
  std::vector<float> out;
  for (size_t e = 0; e + eb <= t.data.size(); e += eb) {
    uint64_t u = 0;
    for (size_t b = 0; b < eb; ++b) u |= uint64_t(t.data[e + b]) << (8 * b);
    const int64_t n = eb == 8 ? int64_t(u) : int64_t(int32_t(uint32_t(u)));
    if (n < 0 || n > (int64_t(1) << 24))
      throw io::FormatError(label + ": tensor '" + t.name + "' holds " + std::to_string(n) +
                            ", not a count from 0 to 2^24 (an fp32 counter's exact range)");
    out.push_back(float(n));
  }
  return out;
}

std::vector<io::Tensor> export_tensors(const std::vector<TorchTensor>& layout, uint32_t total, uint32_t buffer_total,
                                       const std::vector<float>& master, const std::vector<float>& buffers,
                                       io::DType dtype, const std::string& model) {
  const Format fmt = storage_format(dtype);
  if (master.size() != total)
    throw std::invalid_argument("export_torch_tensors: " + std::to_string(master.size()) +
                                " master values but the model " + model + " has " + std::to_string(total) +
                                " (padded)");
  if (buffers.size() != buffer_total)
    throw std::invalid_argument("export_torch_tensors: " + std::to_string(buffers.size()) +
                                " buffer values but the model " + model + " has " + std::to_string(buffer_total) +
                                " (padded)");
  std::vector<io::Tensor> out;
  for (const TorchTensor& t : layout) {
    const std::vector<float>& from = t.buffer ? buffers : master;
    std::vector<float> values(t.param.size);
    for (uint32_t e = 0; e < t.param.size; ++e)
      values[e] = from[t.param.offset + (t.vkamp_index.empty() ? e : t.vkamp_index[e])];
    // Running statistics stay fp32 whatever the weights' dtype (a 16-bit
    // running_var loses the small variances); the counter is PyTorch's I64.
    if (is_counter(t)) out.push_back({t.param.name, io::DType::I64, t.shape, int64_bytes(values)});
    else if (t.buffer) out.push_back({t.param.name, io::DType::F32, t.shape, pack(Format::F32, values)});
    else out.push_back({t.param.name, dtype, t.shape, pack(fmt, values)});
  }
  return out;
}

std::vector<float> import_tensors(const std::vector<TorchTensor>& layout, uint32_t total, uint32_t buffer_total,
                                  const io::TensorFile& file, const std::string& label, const std::string& model_name,
                                  std::vector<float>* buffers) {
  const std::string model = " (model " + model_name + ")";

  std::string unexpected;  // tensors in the file that the model does not have
  for (const io::Tensor& t : file.tensors) {
    bool known = false;
    for (const TorchTensor& want : layout) known = known || want.param.name == t.name;
    if (!known) unexpected += (unexpected.empty() ? "'" : ", '") + t.name + "'";
  }

  std::vector<float> master(total, 0.0f), buffer_values(buffer_total, 0.0f);
  for (const TorchTensor& want : layout) {
    const io::Tensor* t = file.find(want.param.name);
    if (!t)
      throw io::FormatError(label + ": missing tensor '" + want.param.name + "' " + shape_text(want.shape) + model +
                            (unexpected.empty() ? "" : "; the file has unexpected tensor(s) " + unexpected));
    if (t->shape != want.shape)
      throw io::FormatError(label + ": tensor '" + want.param.name + "' has shape " + shape_text(t->shape) +
                            ", expected " + shape_text(want.shape) + model);
    std::vector<float> values = is_counter(want) ? counter_values(*t, label) : std::vector<float>{};
    if (values.empty()) values = file.floats(want.param.name, label);
    std::vector<float>& to = want.buffer ? buffer_values : master;
    for (uint32_t e = 0; e < want.param.size; ++e)
      to[want.param.offset + (want.vkamp_index.empty() ? e : want.vkamp_index[e])] = values[e];
  }
  if (!unexpected.empty()) throw io::FormatError(label + ": unexpected tensor(s) " + unexpected + model);
  if (buffers) *buffers = std::move(buffer_values);
  return master;
}

}  // namespace

std::vector<io::Tensor> export_torch_tensors(const ModelSpec& spec, const std::vector<float>& master,
                                             io::DType dtype, const std::vector<float>& buffers) {
  uint32_t total = 0, buffer_total = 0;
  std::vector<TorchTensor> layout = torch_tensors(spec, &total, &buffer_total);
  return export_tensors(layout, total, buffer_total, master, buffers, dtype, models::describe(spec));
}

std::vector<float> import_torch_tensors(const ModelSpec& spec, const io::TensorFile& file, const std::string& label,
                                        std::vector<float>* buffers) {
  uint32_t total = 0, buffer_total = 0;
  std::vector<TorchTensor> layout = torch_tensors(spec, &total, &buffer_total);
  return import_tensors(layout, total, buffer_total, file, label, models::describe(spec), buffers);
}

std::vector<io::Tensor> export_torch_tensors(const graph::Graph& g, const std::vector<float>& master,
                                             io::DType dtype, const std::vector<float>& buffers) {
  uint32_t total = 0, buffer_total = 0;
  std::vector<TorchTensor> layout = torch_tensors(g, &total, &buffer_total);
  return export_tensors(layout, total, buffer_total, master, buffers, dtype, g.origin());
}

std::vector<float> import_torch_tensors(const graph::Graph& g, const io::TensorFile& file, const std::string& label,
                                        std::vector<float>* buffers) {
  uint32_t total = 0, buffer_total = 0;
  std::vector<TorchTensor> layout = torch_tensors(g, &total, &buffer_total);
  return import_tensors(layout, total, buffer_total, file, label, g.origin(), buffers);
}

}  // namespace vkamp::io
