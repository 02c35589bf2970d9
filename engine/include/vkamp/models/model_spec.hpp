// What a sequential model is, before it exists on a device: the input shape
// and a list of layers (Linear, Conv2d, BatchNorm, MaxPool, AvgPool, Flatten), written
// as a short string and read back by parse_model:
//
//   "784-256r-256r-10"                         an MLP on flat 784-vectors
//   "28x28x1-c6k5p2r-m2-c16k5r-m2-f-120r-84r-10"   LeNet-5 on 28x28 grey images
//   "28x28x1-c16k3p1-bnr-m2-f-10"               conv, BatchNorm, ReLU
//
// Layers are separated by '-'. The first item is the input: a width ("784")
// or an image "HxWxC" (NHWC, one example is h*w*c values, channel fastest).
//
//   <n>[act]            Linear to n outputs                        "256r"
//   c<n>k<k>[p<p>][s<s>][act]
//                       Conv2d to n channels, k x k kernel, zero
//                       padding p (default 0), stride s (default 1) "c6k5p2r"
//   m<w>[s<s>]          max pooling over w x w windows, stride s
//                       (default w: windows that do not overlap)     "m2", "m3s2"
//   a<w>[s<s>]          average pooling, likewise                    "a2"
//   bn[act]             BatchNorm over the channels (after a conv:
//                       BatchNorm2d) or features (after a linear:
//                       BatchNorm1d) of the layer before, which must be
//                       a conv or linear layer                       "bnr"
//   f                   flatten an image to a vector                 "f"
//   d<p>                dropout: in training each value is dropped
//                       with probability p (0 <= p < 1, a decimal) and
//                       the kept ones scaled by 1/(1-p); nothing at
//                       evaluation (ops/dropout.hpp)                   "d0.2"
//
// act is an activation's letter ('r' ReLU, 'g' GELU, ...: the list in
// gpu_abi/activation_list.h), and only Linear, Conv2d and BatchNorm layers
// take one (put it on the BatchNorm, "c16k3-bnr", for conv-BN-ReLU).
// Conv and pooling need an image; a Linear layer needs a vector, so an
// image goes through 'f' first. In NHWC
// flattening moves no data: the flattened feature order is (h, w, c), i.e.
// feature (y * W + x) * C + c, and a Linear layer after it sees exactly the
// bytes the layer before wrote.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vkamp/graph/graph.hpp"
#include "vkamp/graph/shape.hpp"
#include "vkamp/ops/activation.hpp"

namespace vkamp::models {

using graph::Init;

enum class LayerKind { Linear, Conv2d, MaxPool, AvgPool, Flatten, BatchNorm, Dropout };

// One example's activations (graph/shape.hpp).
using graph::Shape;

struct LayerSpec {
  LayerKind kind = LayerKind::Linear;
  uint32_t out = 0;     // Linear: outputs; Conv2d: output channels
  uint32_t kernel = 0;  // Conv2d: kernel size; pools: window size (square)
  uint32_t stride = 1;  // Conv2d and pools
  uint32_t pad = 0;     // Conv2d: zero padding on every side
  bool activate = false;  // Linear, Conv2d and BatchNorm only
  ops::Activation act = ops::Activation::ReLU;
  double p = 0;         // Dropout: the probability of dropping a value

  // A weight and a bias; a BatchNorm's are per channel.
  bool has_params() const { return kind == LayerKind::Linear || kind == LayerKind::Conv2d || kind == LayerKind::BatchNorm; }
  bool takes_activation() const { return has_params(); }
  bool operator==(const LayerSpec&) const = default;
};

struct ModelSpec {
  Shape input;
  std::vector<LayerSpec> layers;
  Init init = Init::Kaiming;

  uint32_t inputs() const { return input.elements(); }  // features per example
  bool operator==(const ModelSpec&) const = default;
};

// Reads the syntax above. Throws ConfigError naming the model string and
// the offending layer: an unknown layer, a bad number, a kernel or window
// larger than its input, a Linear layer on an image without 'f', a conv or
// pool on a vector, an activation after a pool or flatten, a model without
// a Linear or Conv2d layer, or one that does not end in a vector.
ModelSpec parse_model(const std::string& s);
// The canonical string: parse_model(describe(s)) == s. Defaults are left out
// ("c6k5", not "c6k5p0s1"; "m2", not "m2s2").
std::string describe(const ModelSpec& spec);
std::string describe(const LayerSpec& layer);

// The activation shapes: [0] is the input, [l + 1] the output of layer l.
// Throws ConfigError, as parse_model does, for a spec that cannot be built.
std::vector<Shape> layer_shapes(const ModelSpec& spec);

// The spec as a graph (graph.hpp): per Linear layer "fc<i>" with parameters
// "fc<i>.weight" {out, in} and "fc<i>.bias", per Conv2d "conv<i>" likewise
// with weight {out_c, k, k, in_c}, per BatchNorm "bn<i>" (Graph::batch_norm:
// bn<i>.weight, .bias, .running_mean, .running_var, .num_batches_tracked),
// an activation node "<layer>.act" after any of them when it has one,
// pools "pool<i>", "flatten<i>", "dropout<i>"; input "x". The
// graph's origin is the canonical model string.
graph::Graph build_graph(const ModelSpec& spec);

}  // namespace vkamp::models
