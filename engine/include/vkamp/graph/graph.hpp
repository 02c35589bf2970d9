// A model as a DAG of ops over named tensors, and the builder that makes
// it. Every tensor has a name: the model input, the parameters (with their
// dims and initialisation), and one output per node, named after the node.
// A node names its inputs; the builder checks each op's inputs and infers
// its output shape as the node is added, so a Graph is always a valid DAG in
// topological order (nodes can only use tensors that exist).
//
//   graph::Graph g;
//   g.input("x", graph::Shape::vector(16));
//   g.param("fc1.weight", {32, 16});
//   g.param("fc1.bias", {32}, graph::Init::Zero);
//   g.linear("fc1", "x", "fc1.weight", "fc1.bias");
//   g.activation("relu1", "fc1", ops::Activation::ReLU);
//   ...
//   g.add("residual", "relu2", "x");
//   g.set_output("residual");
//
// Errors are ConfigError naming the node (and the origin, a file name, when
// one was set).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vkamp/graph/shape.hpp"
#include "vkamp/ops/activation.hpp"
#include "vkamp/ops/rope.hpp"
#include "vkamp/quant/ggml_type.hpp"

namespace vkamp::graph {

// How a parameter starts: Kaiming- or Xavier-uniform from its fans, 0, 1
// (a LayerNorm's gain, as PyTorch starts it), normal with a given
// standard deviation (GPT-2's 0.02), or PyTorch's nn.Linear default,
// kaiming_uniform_(a = sqrt(5)), U(+-1 / sqrt(fan_in)) (how PEFT draws lora_A).
enum class Init { Kaiming, Xavier, Zero, One, Normal, TorchLinear };

// Buffer: persistent fp32 state that is not trained (a BatchNorm's running
// statistics): declared like a parameter (dims, Init::Zero or Init::One),
// kept in its own store (buffer_store.hpp), written only by an op's commit
// in the step's update pass.
// Frozen: a parameter that is not trained (a fine-tune's base weights):
// read by ops as a parameter is, but held once, in the run's storage
// format, with no fp32 master, gradient or optimizer state
// (frozen_store.hpp); it takes no gradient.
enum class TensorKind { Input, Param, Activation, Buffer, Frozen };

struct Tensor {
  std::string name;
  TensorKind kind = TensorKind::Activation;
  Shape shape;                 // per example (Input, Activation); Param, Buffer: c = element count
  std::vector<uint32_t> dims;  // Param, Buffer: e.g. {out, in}, {out_c, k, k, in_c}, {out}
  Init init = Init::Zero;      // Param, Buffer
  int producer = -1;           // the node writing it; -1 for inputs and parameters
  double init_std = 0;         // Param with Init::Normal only
  // Frozen only: held in ggml blocks of this type (a quantized base, as a
  // GGUF file stores it) instead of the run's format; ops that read it
  // dequantize as they load (OpRun::blocks).
  std::optional<quant::GgmlType> blocks;
};

// Elements of a parameter or buffer (the product of its dims).
uint64_t elements(const Tensor& t);

// The attributes any op may read; each op documents which it uses.
struct Attributes {
  uint32_t window = 0;  // pooling window
  uint32_t stride = 1;  // conv2d and pooling (pooling: 0 means the window)
  uint32_t pad = 0;     // conv2d
  uint32_t heads = 1;   // attention, rope
  uint32_t kv_heads = 0;  // rope: key/value heads (grouped-query attention); 0: as many as heads
  ops::Rope rope;       // rope: config.json's rope_theta and rope_scaling
  double p = 0;         // dropout: each element's probability of being dropped
  double eps = 1e-6;    // rms_norm: added to mean(x^2) (config.json's rms_norm_eps)
  double scale = 1;     // lora: the adapter's factor, lora_alpha / r
  ops::Activation act = ops::Activation::ReLU;  // activation; a linear with `activate`
  // linear: apply act in its GEMM's epilogue. The executor fuses a linear
  // and the activation that alone reads it into one such node
  // (fuse_epilogues.hpp); a graph may also say so itself.
  bool activate = false;
  // The executor's fusion of an activation's backward into the GEMM before
  // it (fuse_epilogues.hpp), never a graph's own: this linear's input is
  // the output of a linear with `activate` that nothing else reads, and the
  // gradient this linear writes for it is already that linear's dZ =
  // dX f'(z) (dx_is_dz; z read from its producer's kept scratch), ...
  bool dx_is_dz = false;
  // ... which that producer then takes as it is (dout_is_dz).
  bool dout_is_dz = false;
  bool operator==(const Attributes&) const = default;
};

struct Node {
  std::string name;  // also the name of its output tensor
  std::string op;    // a registered op ("linear", "add", ...; op_registry.hpp)
  std::vector<std::string> inputs;
  Attributes attrs;
};

class Graph {
 public:
  // Where the graph came from, for error messages ("model.yaml").
  void set_origin(std::string origin) { origin_ = std::move(origin); }
  const std::string& origin() const { return origin_; }

  std::string input(const std::string& name, Shape shape);
  std::string param(const std::string& name, std::vector<uint32_t> dims, Init init = Init::Kaiming,
                    double init_std = 0);
  // A parameter that is not trained (TensorKind::Frozen).
  std::string frozen(const std::string& name, std::vector<uint32_t> dims, Init init = Init::Kaiming,
                     double init_std = 0);
  // Persistent fp32 state that is not trained: Init::Zero or Init::One.
  std::string buffer(const std::string& name, std::vector<uint32_t> dims, Init init = Init::Zero);
  // Any registered op: checks the inputs, infers the output shape.
  std::string node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                          Attributes attrs = {});

  // Shorthands for the built-in ops.
  std::string linear(const std::string& name, const std::string& x, const std::string& weight,
                            const std::string& bias = "");
  std::string conv2d(const std::string& name, const std::string& x, const std::string& weight,
                            const std::string& bias, uint32_t stride = 1, uint32_t pad = 0);
  std::string max_pool(const std::string& name, const std::string& x, uint32_t window, uint32_t stride = 0);
  std::string avg_pool(const std::string& name, const std::string& x, uint32_t window, uint32_t stride = 0);
  std::string flatten(const std::string& name, const std::string& x);
  std::string activation(const std::string& name, const std::string& x, ops::Activation act);
  std::string add(const std::string& name, const std::string& a, const std::string& b);
  std::string concat(const std::string& name, std::vector<std::string> xs);
  // LayerNorm over the last dimension (c), with params gamma {c} and beta {c}.
  std::string layer_norm(const std::string& name, const std::string& x, const std::string& gamma,
                         const std::string& beta);
  // RMSNorm over the last dimension (c), with param weight {c}: Llama's.
  std::string rms_norm(const std::string& name, const std::string& x, const std::string& weight, double eps);

  // BatchNorm (BatchNorm2d over an image's channels, BatchNorm1d over a
  // vector's features) with PyTorch's names: declares params
  // <name>.weight {c} (1) and <name>.bias {c} (0), buffers
  // <name>.running_mean {c} (0), <name>.running_var {c} (1) and
  // <name>.num_batches_tracked {1} (0), and node <name> (op "batch_norm").
  std::string batch_norm(const std::string& name, const std::string& x);

  // GPT's input layer: token ids (a tokens input) through wte {vocab, c},
  // plus wpe {positions, c} unless it is "" (Llama's).
  std::string embedding(const std::string& name, const std::string& ids, const std::string& wte,
                        const std::string& wpe = "");
  // Causal multi-head self-attention over a sequence of q | k | v (3c features).
  std::string attention(const std::string& name, const std::string& qkv, uint32_t heads);
  // Llama's attention input: q, k and v rotated (k and v of kv_heads heads,
  // repeated to heads) into the q | k | v attention reads.
  std::string rope(const std::string& name, const std::string& q, const std::string& k, const std::string& v,
                   uint32_t heads, uint32_t kv_heads, const ops::Rope& rope);
  // A linear layer with a LoRA adapter: x W^T (+ b) + scale (x' A^T) B^T,
  // A {r, in} and B {out, r} (W and b usually frozen), x' the adapter's
  // input: `adapter_input` (a dropout of x), or x itself when "".
  std::string lora(const std::string& name, const std::string& x, const std::string& weight, const std::string& a,
                   const std::string& b, double scale, const std::string& bias = "",
                   const std::string& adapter_input = "");
  // A gated linear unit act(gate) * up (SwiGLU with SiLU).
  std::string glu(const std::string& name, const std::string& gate, const std::string& up, ops::Activation act);

  void set_output(const std::string& name);
  // Holds frozen matrix `name` in ggml blocks of `type` (Tensor::blocks).
  // ConfigError unless it is a frozen matrix whose rows (dims[1]) are whole
  // blocks.
  void hold_in_blocks(const std::string& name, quant::GgmlType type);
  // The graph without its output node (the last node), whose first input
  // becomes the output; every tensor keeps its index, so the parameter and
  // frozen layouts are the same. The chunked logits
  // (train/logit_chunks.hpp) run that node themselves.
  Graph without_output_node() const;

  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Tensor& tensor(const std::string& name) const;
  int tensor_index(const std::string& name) const;  // -1 when unknown
  bool has_tensor(const std::string& name) const { return tensor_index(name) >= 0; }
  int input_index() const { return input_; }
  int output_index() const { return output_; }
  const Tensor& input_tensor() const;
  const Tensor& output_tensor() const;
  std::vector<int> param_indices() const;   // in declaration order: the flat layout's order
  std::vector<int> buffer_indices() const;  // the same for the buffers
  std::vector<int> frozen_indices() const;  // and for the frozen parameters

  // Throws ConfigError "<origin>: node '<name>': <what>".
  [[noreturn]] void fail(const std::string& node, const std::string& what) const;

 private:
  int add_tensor(Tensor t, const std::string& node);

  std::string origin_;
  std::vector<Tensor> tensors_;
  std::vector<Node> nodes_;
  std::map<std::string, int> by_name_;
  int input_ = -1, output_ = -1;
};

}  // namespace vkamp::graph
