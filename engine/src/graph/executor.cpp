#include "vkamp/graph/executor.hpp"

#include <algorithm>

#include "vkamp/error.hpp"
#include "vkamp/graph/op_registry.hpp"
#include "executor_state.hpp"
#include "fuse_epilogues.hpp"

namespace vkamp::graph {
namespace {

// Every planned buffer starts where any device may bind a storage view.
constexpr uint64_t kPoolAlign = 256;

}  // namespace


Executor::Executor(Context& ctx, const Graph& g, Format fmt, uint32_t max_rows, ParamStore& params,
                   BufferStore& buffers)
    : ctx_(ctx), graph_(g), steps_(fuse_epilogues(g)), fmt_(fmt), max_rows_(max_rows), params_(params),
      buffers_(buffers) {
  graph_.input_tensor();  // both must exist; these throw otherwise
  const Tensor& out = graph_.output_tensor();
  analyse();
  plan();
  size_t eb = format_bytes(fmt);
  auto pool = [&](uint64_t bytes) { return std::make_unique<Buffer>(ctx, std::max<uint64_t>(bytes, 4)); };
  activation_pool_ = pool(activation_plan_.pool_bytes);
  workspace_pool_ = pool(workspace_plan_.pool_bytes);
  output_ = pool(uint64_t(max_rows) * out.shape.elements() * eb);
  doutput_ = pool(uint64_t(max_rows) * out.shape.elements() * eb);
  set_micro_batches(1);
}

void Executor::set_micro_batches(uint32_t micro_batches) {
  if (micro_batches == 0) throw Error("Executor: 0 micro-batches");
  micro_batches_ = micro_batches;
  node_state_offset_.assign(nodes_.size(), -1);
  node_state_floats_.assign(nodes_.size(), 0);
  uint64_t total = 0;
  for (size_t k = 0; k < nodes_.size(); ++k) {
    const NodeState& s = *nodes_[k];
    uint64_t n = s.def->state_floats ? s.def->state_floats(s.shapes, micro_batches) : 0;
    if (!n) continue;
    node_state_offset_[k] = int64_t(total);
    node_state_floats_[k] = int64_t(n);
    total += (n + kPoolAlign / 4 - 1) / (kPoolAlign / 4) * (kPoolAlign / 4);
  }
  node_state_.reset();
  if (total) {
    node_state_ = std::make_unique<Buffer>(ctx_, total * 4);
    node_state_->fill(0);
  }
}

Executor::~Executor() = default;

// Which tensors need gradients (those computed from a parameter) and which
// nodes run backward (their output's gradient is defined), in topological
// order and its reverse.
void Executor::analyse() {
  const auto& tensors = graph_.tensors();
  const auto& nodes = steps_;
  root_.resize(tensors.size());
  producer_.assign(tensors.size(), -1);
  requires_grad_.assign(tensors.size(), false);
  receives_grad_.assign(tensors.size(), false);
  for (size_t t = 0; t < tensors.size(); ++t) {
    root_[t] = int(t);
    requires_grad_[t] = tensors[t].kind == TensorKind::Param;
  }
  for (const Node& n : nodes) {
    auto state = std::make_unique<NodeState>(n);
    state->def = find_op(n.op);
    state->shapes.fmt = fmt_;
    int out = graph_.tensor_index(n.name);
    producer_[out] = int(nodes_.size());
    for (const std::string& name : n.inputs) {
      int t = graph_.tensor_index(name);
      state->shapes.in.push_back(&tensors[t]);
      requires_grad_[out] = requires_grad_[out] || requires_grad_[t];
    }
    state->shapes.out = tensors[out].shape;
    if (state->def->view) root_[out] = root_[graph_.tensor_index(n.inputs[0])];
    nodes_.push_back(std::move(state));
  }
  receives_grad_[graph_.output_index()] = true;
  for (size_t k = nodes.size(); k-- > 0;) {
    int out = graph_.tensor_index(nodes[k].name);
    nodes_[k]->runs_backward = receives_grad_[out] && requires_grad_[out];
    if (!nodes_[k]->runs_backward) continue;
    for (const std::string& name : nodes[k].inputs) {
      int t = graph_.tensor_index(name);
      if (requires_grad_[t]) receives_grad_[t] = true;
    }
  }
  for (size_t k = 0; k < nodes.size(); ++k) {
    NodeState& s = *nodes_[k];
    for (const std::string& name : nodes[k].inputs)
      s.shapes.grads.push_back(s.runs_backward && requires_grad_[graph_.tensor_index(name)]);
  }
}

void Executor::plan() {
  const auto& tensors = graph_.tensors();
  const auto& nodes = steps_;
  const uint32_t N = uint32_t(nodes.size());
  const size_t eb = format_bytes(fmt_);
  auto back_time = [&](size_t k) { return 2 * N - uint32_t(k); };
  const int out_root = root_[graph_.output_index()];
  auto bytes_of = [&](int t) { return uint64_t(max_rows_) * tensors[t].shape.elements() * eb; };

  // Activation values and gradients, by root tensor: from the producer's
  // forward to the last read, and from the first backward contribution to
  // the producer's backward. The output and its gradient have their own
  // buffers (the loss reads and writes them between the two passes). A
  // tensor no step produces (a linear's output fused into its activation)
  // has none.
  value_slot_.assign(tensors.size(), -1);
  grad_slot_.assign(tensors.size(), -1);
  for (size_t t = 0; t < tensors.size(); ++t) {
    if (tensors[t].kind != TensorKind::Activation || root_[t] != int(t) || int(t) == out_root) continue;
    if (producer_[t] < 0) continue;
    uint32_t p = uint32_t(producer_[t]);
    Lifetime value{bytes_of(int(t)), p, p};
    const NodeState& producer = *nodes_[p];
    if (producer.runs_backward && producer.def->backward_reads_output && producer.def->backward_reads_output(producer.shapes))
      value.last = back_time(p);
    Lifetime grad{bytes_of(int(t)), back_time(p), back_time(p)};
    for (size_t k = 0; k < N; ++k)
      for (const std::string& name : nodes[k].inputs) {
        int in = graph_.tensor_index(name);
        if (root_[in] != int(t)) continue;
        value.last = std::max(value.last, uint32_t(k));
        if (nodes_[k]->runs_backward && nodes_[k]->def->backward_reads_inputs)
          value.last = std::max(value.last, back_time(k));
        if (nodes_[k]->runs_backward && requires_grad_[in]) grad.first = std::min(grad.first, back_time(k));
      }
    value_slot_[t] = int(activation_lifetimes_.size());
    activation_lifetimes_.push_back(value);
    if (receives_grad_[t] && requires_grad_[t]) {
      grad_slot_[t] = int(activation_lifetimes_.size());
      activation_lifetimes_.push_back(grad);
    }
  }

  // Op scratch, and a buffer for a contribution that a kernel can only
  // overwrite but that must be added (found by replaying the backward order).
  std::vector<bool> written(tensors.size(), false);
  written[out_root] = true;
  for (size_t k = N; k-- > 0;) {
    NodeState& s = *nodes_[k];
    auto scratch = [&](uint64_t per_row, uint32_t first, uint32_t last) {
      workspace_lifetimes_.push_back({uint64_t(max_rows_) * per_row * eb, first, last});
      return int(workspace_lifetimes_.size() - 1);
    };
    if (s.def->kept_per_row && s.def->kept_per_row(s.shapes))
      s.kept = scratch(s.def->kept_per_row(s.shapes), uint32_t(k), s.runs_backward ? back_time(k) : uint32_t(k));
    if (!s.runs_backward) continue;
    if (s.def->workspace_per_row && s.def->workspace_per_row(s.shapes))
      s.work = scratch(s.def->workspace_per_row(s.shapes), back_time(k), back_time(k));
    uint64_t sum_per_row = 0;
    for (size_t i = 0; i < s.shapes.in.size(); ++i) {
      int r = root_[graph_.tensor_index(nodes[k].inputs[i])];
      if (!s.shapes.grads[i] || tensors[r].kind == TensorKind::Param) continue;
      if (written[r]) sum_per_row = std::max<uint64_t>(sum_per_row, tensors[r].shape.elements());
      written[r] = true;
    }
    if (sum_per_row) s.sum = scratch(sum_per_row, back_time(k), back_time(k));
  }
  activation_plan_ = plan_memory(activation_lifetimes_, kPoolAlign);
  workspace_plan_ = plan_memory(workspace_lifetimes_, kPoolAlign);
}

uint64_t Executor::activation_unshared_bytes() const {
  return activation_plan_.unshared_bytes + output_->bytes() + doutput_->bytes();
}

std::vector<Executor::Placement> Executor::placements() const {
  std::vector<Placement> out;
  for (size_t i = 0; i < activation_lifetimes_.size(); ++i) {
    const Lifetime& l = activation_lifetimes_[i];
    out.push_back({false, activation_plan_.offsets[i], l.bytes, l.first, l.last});
  }
  for (size_t i = 0; i < workspace_lifetimes_.size(); ++i) {
    const Lifetime& l = workspace_lifetimes_[i];
    out.push_back({true, workspace_plan_.offsets[i], l.bytes, l.first, l.last});
  }
  return out;
}

}  // namespace vkamp::graph
