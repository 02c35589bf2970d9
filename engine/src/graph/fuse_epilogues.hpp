// The executor's epilogue fusion: a linear whose output only an activation
// reads becomes one GEMM that applies the activation as it stores
// (gemm.comp's epilogue), instead of a GEMM, a bias_add and an activation
// that each read and write the whole output.
#pragma once
#include <vector>

#include "vkamp/graph/graph.hpp"
#include "vkamp/kernel_paths.hpp"

namespace vkamp::graph {

// KernelPaths::fuse_epilogue off turns fusion off (the bias too: a linear
// then runs a separate bias_add), for tests and benchmarks against the plain path.
bool epilogue_fusion_enabled(const KernelPaths& paths);
// fuse_act_grad off (or fusion off) keeps each fused activation's
// backward a pass of its own instead of the next GEMM's epilogue.
bool act_grad_fusion_enabled(const KernelPaths& paths);

// The nodes the executor runs, in an order that is still topological: the
// graph's, where each linear whose output is read by exactly one node, an
// activation, and is not the graph's output, is merged into that node: a
// linear with attrs.activate, under the activation's name, so the tensor
// users and probes see keeps its name. The linear's own output tensor is
// then produced by no node. Parameters and the Graph itself do not change.
// Then, where such a fused node's output is read only by another linear,
// and its activation keeps z (every one but ReLU): that linear's backward
// GEMM for its input applies f'(z) as it stores (attrs.dx_is_dz), and the
// fused node's backward skips its own pass (attrs.dout_is_dz). The stored
// gradient dX of the activation's output is never written: one pass over
// it less, and the same bits.
std::vector<Node> fuse_epilogues(const Graph& g, const KernelPaths& paths);

}  // namespace vkamp::graph
