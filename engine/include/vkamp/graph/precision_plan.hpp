// Precision levels (MindSpore's amp_level names; Cerebras's
// precision_opt_level maps onto them, see docs/config.md): which storage
// format each step of a graph runs in. A tensor is stored in the format of
// the step that writes it; the executor inserts a cast step where a step
// reads a tensor stored in another format (executor.hpp).
//
//   O0  every step in fp32 (the run's format is fp32 too: the command line
//       and settings files set it). A model built at O0 in a 16-bit format
//       still writes its output in that format, as at O1.
//   O1  PyTorch autocast's split: the ops that declare themselves 16-bit
//       compute ops (OpDef::computes_in_16_bits_at_o1: linear, conv2d and
//       attention, the GEMMs) in the 16-bit format; every other op (activations, pooling, add,
//       concat, layer_norm, embedding) in fp32, its parameters read from the
//       fp32 masters. The step writing the model output runs in the 16-bit
//       format, so the loss and the batch feeder see what they see at O2.
//   O2  every step in the run's format (the default; vkamp's behaviour
//       before levels existed): 16-bit activations and working weights, fp32
//       accumulation, statistics, softmax, loss and masters.
//   O3  O2 plus normalisation parameters and statistics in 16 bits
//       (OpShapes::norm_in_16_bits): batch_norm reads weight and bias from
//       the 16-bit working copy, not the masters, and rounds its batch mean
//       and variance to the format; its running buffers stay fp32. layer_norm
//       already reads gamma and beta from the working copy at O2 and keeps
//       its per-row mean and rstd in fp32, so it runs as at O2.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "vkamp/amp_level.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/graph/graph.hpp"

namespace vkamp::graph {

using vkamp::AmpLevel;
using vkamp::amp_level_name;
using vkamp::parse_amp_level;

// The format each of `steps` (a graph's nodes, in order) runs in, for a run
// in `fmt` (the 16-bit format, or fp32) at `level`. A view step (flatten)
// runs in the format of the tensor it views; steps must be topological.
std::vector<Format> plan_precision(const Graph& g, const std::vector<Node>& steps, Format fmt, AmpLevel level);

// Whether an op runs in the 16-bit format at O1: its own declaration
// (OpDef::computes_in_16_bits_at_o1; linear, conv2d and attention).
bool runs_in_16_bits_at_o1(const std::string& op);

}  // namespace vkamp::graph
