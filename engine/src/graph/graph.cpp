#include "vkamp/graph/graph.hpp"

#include <stdexcept>

#include "vkamp/graph/op_registry.hpp"
#include "vkamp/config_error.hpp"

namespace vkamp::graph {

std::string to_string(const Shape& s) {
  if (s.ids) return std::to_string(s.w) + " ids";
  if (!s.image && s.w > 1) return std::to_string(s.w) + "x" + std::to_string(s.c);
  if (!s.image) return std::to_string(s.c);
  return std::to_string(s.h) + "x" + std::to_string(s.w) + "x" + std::to_string(s.c);
}

uint64_t elements(const Tensor& t) {
  uint64_t n = 1;
  for (uint32_t d : t.dims) n *= d;
  return n;
}

void Graph::fail(const std::string& node, const std::string& what) const {
  std::string where = origin_.empty() ? "" : origin_ + ": ";
  throw vkamp::ConfigError(where + "node '" + node + "': " + what);
}

int Graph::tensor_index(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? -1 : it->second;
}

const Tensor& Graph::tensor(const std::string& name) const {
  int i = tensor_index(name);
  if (i < 0) throw vkamp::ConfigError((origin_.empty() ? "" : origin_ + ": ") + "no tensor named '" + name + "'");
  return tensors_[i];
}

void Graph::hold_in_blocks(const std::string& name, quant::GgmlType type) {
  const int i = tensor_index(name);
  const quant::GgmlTypeInfo& info = quant::ggml_type_info(type);
  if (i < 0 || tensors_[i].kind != TensorKind::Frozen || tensors_[i].dims.size() != 2 ||
      tensors_[i].dims[1] % info.block_values != 0)
    throw vkamp::ConfigError((origin_.empty() ? "" : origin_ + ": ") + "'" + name + "' cannot be held in " + info.name +
                             " blocks: only a frozen matrix whose rows are whole blocks of " +
                             std::to_string(info.block_values) + " can");
  tensors_[i].blocks = type;
}

const Tensor& Graph::input_tensor() const {
  if (input_ < 0) throw vkamp::ConfigError((origin_.empty() ? "" : origin_ + ": ") + "the graph has no input");
  return tensors_[input_];
}

const Tensor& Graph::output_tensor() const {
  if (output_ < 0) throw vkamp::ConfigError((origin_.empty() ? "" : origin_ + ": ") + "the graph has no output");
  return tensors_[output_];
}

namespace {

std::vector<int> indices_of(const std::vector<Tensor>& tensors, TensorKind kind) {
  std::vector<int> out;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].kind == kind) out.push_back(int(i));
  return out;
}

}  // namespace

std::vector<int> Graph::param_indices() const { return indices_of(tensors_, TensorKind::Param); }
std::vector<int> Graph::frozen_indices() const { return indices_of(tensors_, TensorKind::Frozen); }
std::vector<int> Graph::buffer_indices() const { return indices_of(tensors_, TensorKind::Buffer); }

int Graph::add_tensor(Tensor t, const std::string& node) {
  if (t.name.empty()) fail(node, "a tensor needs a name");
  if (by_name_.count(t.name)) fail(node, "the name '" + t.name + "' is already used");
  tensors_.push_back(std::move(t));
  by_name_[tensors_.back().name] = int(tensors_.size() - 1);
  return int(tensors_.size() - 1);
}

std::string Graph::input(const std::string& name, Shape shape) {
  if (input_ >= 0) fail(name, "the graph already has an input ('" + tensors_[input_].name + "')");
  if (shape.elements() == 0) fail(name, "an input needs a shape with elements");
  input_ = add_tensor({name, TensorKind::Input, shape, {}, Init::Zero, -1}, name);
  return tensors_[input_].name;
}

std::string Graph::param(const std::string& name, std::vector<uint32_t> dims, Init init, double init_std) {
  if (dims.empty()) fail(name, "a parameter needs dims");
  for (uint32_t d : dims)
    if (d == 0) fail(name, "a parameter dim is 0");
  Tensor t{name, TensorKind::Param, {}, std::move(dims), init, -1};
  t.init_std = init_std;
  if (init == Init::Normal && !(init_std > 0)) fail(name, "a normal initialisation needs a standard deviation above 0");
  uint64_t n = elements(t);
  if (n > 0xFFFFFFFFull) fail(name, "over 2^32 elements");
  t.shape = Shape::vector(uint32_t(n));
  return tensors_[add_tensor(std::move(t), name)].name;
}

std::string Graph::frozen(const std::string& name, std::vector<uint32_t> dims, Init init, double init_std) {
  std::string p = param(name, std::move(dims), init, init_std);  // the same checks
  tensors_[tensor_index(p)].kind = TensorKind::Frozen;
  return p;
}

std::string Graph::buffer(const std::string& name, std::vector<uint32_t> dims, Init init) {
  if (init != Init::Zero && init != Init::One) fail(name, "a buffer starts at 0 or 1");
  std::string p = param(name, std::move(dims), init);  // the same checks
  tensors_[tensor_index(p)].kind = TensorKind::Buffer;
  return p;
}

std::string Graph::node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                               Attributes attrs) {
  const OpDef* def = find_op(op);
  if (!def) fail(name, "unknown op '" + op + "'");
  if (inputs.size() < def->min_inputs || inputs.size() > def->max_inputs)
    fail(name, op + " takes " + std::to_string(def->min_inputs) +
                   (def->max_inputs == def->min_inputs ? "" : " to " + std::to_string(def->max_inputs)) +
                   " inputs, not " + std::to_string(inputs.size()));
  Node n{name, op, std::move(inputs), attrs};
  OpShapes shapes{n, {}, {}};
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    int t = tensor_index(n.inputs[i]);
    if (t < 0) fail(name, "unknown input '" + n.inputs[i] + "'");
    // A frozen parameter stands where a parameter does.
    bool param = tensors_[t].kind == TensorKind::Param || tensors_[t].kind == TensorKind::Frozen,
         buffer = tensors_[t].kind == TensorKind::Buffer;
    bool wants_buffer = i >= def->buffers_from, wants_param = !wants_buffer && i >= def->params_from;
    if (buffer != wants_buffer)
      fail(name, "input '" + n.inputs[i] + "' must " + (buffer ? "not " : "") + "be a buffer");
    if (param != wants_param)
      fail(name, "input '" + n.inputs[i] + "' must " + (param ? "not " : "") + "be a parameter");
    if (tensors_[t].shape.ids && !def->reads_ids)
      fail(name, "input '" + n.inputs[i] + "' holds token ids, which only an embedding reads");
    shapes.in.push_back(&tensors_[t]);
  }
  try {
    shapes.out = def->infer(shapes);
  } catch (const std::invalid_argument& e) {
    fail(name, e.what());
  }
  if (shapes.out.elements() == 0) fail(name, "the output has no elements");
  int out = add_tensor({name, TensorKind::Activation, shapes.out, {}, Init::Zero, int(nodes_.size())}, name);
  nodes_.push_back(std::move(n));
  return tensors_[out].name;
}

std::string Graph::linear(const std::string& name, const std::string& x, const std::string& weight,
                                 const std::string& bias) {
  std::vector<std::string> in{x, weight};
  if (!bias.empty()) in.push_back(bias);
  return node(name, "linear", std::move(in));
}

std::string Graph::conv2d(const std::string& name, const std::string& x, const std::string& weight,
                                 const std::string& bias, uint32_t stride, uint32_t pad) {
  return node(name, "conv2d", {x, weight, bias}, {.stride = stride, .pad = pad});
}

std::string Graph::max_pool(const std::string& name, const std::string& x, uint32_t window, uint32_t stride) {
  return node(name, "max_pool", {x}, {.window = window, .stride = stride ? stride : window});
}

std::string Graph::avg_pool(const std::string& name, const std::string& x, uint32_t window, uint32_t stride) {
  return node(name, "avg_pool", {x}, {.window = window, .stride = stride ? stride : window});
}

std::string Graph::flatten(const std::string& name, const std::string& x) { return node(name, "flatten", {x}); }

std::string Graph::activation(const std::string& name, const std::string& x, ops::Activation act) {
  return node(name, "activation", {x}, {.act = act});
}

std::string Graph::add(const std::string& name, const std::string& a, const std::string& b) {
  return node(name, "add", {a, b});
}

std::string Graph::layer_norm(const std::string& name, const std::string& x, const std::string& gamma,
                              const std::string& beta) {
  return node(name, "layer_norm", {x, gamma, beta});
}

std::string Graph::rope(const std::string& name, const std::string& q, const std::string& k, const std::string& v,
                        uint32_t heads, uint32_t kv_heads, const ops::Rope& rope) {
  return node(name, "rope", {q, k, v}, {.heads = heads, .kv_heads = kv_heads, .rope = rope});
}

std::string Graph::lora(const std::string& name, const std::string& x, const std::string& weight, const std::string& a,
                        const std::string& b, double scale, const std::string& bias, const std::string& adapter_input) {
  std::vector<std::string> inputs{x, adapter_input.empty() ? x : adapter_input, weight, a, b};
  if (!bias.empty()) inputs.push_back(bias);
  return node(name, "lora", std::move(inputs), {.scale = scale});
}

std::string Graph::glu(const std::string& name, const std::string& gate, const std::string& up, ops::Activation act) {
  return node(name, "glu", {gate, up}, {.act = act});
}

std::string Graph::rms_norm(const std::string& name, const std::string& x, const std::string& weight, double eps) {
  return node(name, "rms_norm", {x, weight}, {.eps = eps});
}

std::string Graph::batch_norm(const std::string& name, const std::string& x) {
  int t = tensor_index(x);
  if (t < 0) fail(name, "unknown input '" + x + "'");
  uint32_t c = tensors_[t].shape.c;
  if (tensors_[t].kind == TensorKind::Param || tensors_[t].kind == TensorKind::Buffer || c == 0)
    fail(name, "input '" + x + "' must be an activation");
  std::string w = param(name + ".weight", {c}, Init::One), b = param(name + ".bias", {c}, Init::Zero);
  std::string mean = buffer(name + ".running_mean", {c}, Init::Zero);
  std::string var = buffer(name + ".running_var", {c}, Init::One);
  std::string tracked = buffer(name + ".num_batches_tracked", {1}, Init::Zero);
  return node(name, "batch_norm", {x, w, b, mean, var, tracked});
}

std::string Graph::embedding(const std::string& name, const std::string& ids, const std::string& wte,
                             const std::string& wpe) {
  if (wpe.empty()) return node(name, "embedding", {ids, wte});
  return node(name, "embedding", {ids, wte, wpe});
}

std::string Graph::attention(const std::string& name, const std::string& qkv, uint32_t heads) {
  return node(name, "attention", {qkv}, {.heads = heads});
}

std::string Graph::concat(const std::string& name, std::vector<std::string> xs) {
  return node(name, "concat", std::move(xs));
}

Graph Graph::without_output_node() const {
  if (nodes_.empty() || output_ < 0 || tensors_[output_].name != nodes_.back().name)
    fail(output_ < 0 ? "" : tensors_[output_].name, "the output is not the last node's");
  Graph g = *this;
  g.nodes_.pop_back();
  g.output_ = -1;
  g.set_output(nodes_.back().inputs.at(0));
  return g;
}

void Graph::set_output(const std::string& name) {
  int t = tensor_index(name);
  if (t < 0 || tensors_[t].kind != TensorKind::Activation) fail(name, "the output must be a node's output");
  if (!tensors_[t].shape.elements() || tensors_[t].shape.image) fail(name, "the output must be a vector");
  output_ = t;
}

}  // namespace vkamp::graph
