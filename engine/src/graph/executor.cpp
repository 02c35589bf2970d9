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

OpDef cast_op();  // ops/cast.cpp: the executor's own op, not a graph's

namespace {

const OpDef* def_of(const std::string& op) {
  static const OpDef cast = cast_op();
  return op == "cast" ? &cast : find_op(op);
}

}  // namespace

Executor::Executor(Context& ctx, const Graph& g, Format fmt, uint32_t max_rows, AmpLevel level, bool recompute)
    : ctx_(ctx), graph_(g), fmt_(fmt), level_(level), max_rows_(max_rows), recompute_(recompute) {
  graph_.input_tensor();  // both must exist; these throw otherwise
  const Tensor& out = graph_.output_tensor();
  // O1 runs activations in fp32, apart from the GEMM that a fused epilogue
  // would apply them in.
  insert_casts(level == AmpLevel::O1 ? g.nodes() : fuse_epilogues(g, ctx.paths()));
  analyse();
  plan();
  output_bytes_ = uint64_t(max_rows) * out.shape.elements() * format_bytes(fmt);
  set_micro_batches(1);  // lays the node state out; allocate() makes it
}

uint64_t Executor::node_state_bytes() const { return node_state_floats_total_ * 4; }

void Executor::allocate(ParamStore& params, BufferStore& buffers, const FrozenStore* frozen) {
  if (activation_pool_) throw Error("Executor: allocated twice");
  if (!graph_.frozen_indices().empty() && !frozen) throw Error("Executor: the graph has frozen parameters but no store for them");
  params_ = &params;
  buffers_ = &buffers;
  frozen_ = frozen;
  const BlockLayout blocks = block_layout();
  activation_pool_ = std::make_unique<DeviceBlocks>(ctx_, blocks, activation_plan_.pool_bytes, "the activations");
  workspace_pool_ = std::make_unique<DeviceBlocks>(ctx_, blocks, workspace_plan_.pool_bytes, "the op workspace");
  output_ = std::make_unique<Buffer>(ctx_, std::max<uint64_t>(output_bytes_, 4), Memory::Device, "the model's output");
  doutput_ = std::make_unique<Buffer>(ctx_, std::max<uint64_t>(output_bytes_, 4), Memory::Device, "its gradient");
  set_micro_batches(micro_batches_);
}

BlockLayout Executor::block_layout() const {
  BlockLayout l = BlockLayout::of(ctx_);
  l.alignment = std::max<uint64_t>(l.alignment, kPoolAlign);
  return l;
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
  node_state_floats_total_ = total;
  node_state_.reset();
  if (total && activation_pool_) {
    node_state_ = std::make_unique<Buffer>(ctx_, total * 4, Memory::Device, "the nodes' state");
    node_state_->fill(0);
    for (size_t k = 0; k < nodes_.size(); ++k) {
      const NodeState& s = *nodes_[k];
      if (!s.def->initial_state || node_state_offset_[k] < 0) continue;
      const std::vector<float> v = s.def->initial_state(s.shapes);
      if (v.size() > size_t(node_state_floats_[k])) throw Error("graph: node state's initial values overflow it");
      node_state_->write(v, size_t(node_state_offset_[k]) * 4);
    }
  }
}

Executor::~Executor() = default;

// steps_: `nodes` with a cast step before each node that reads a tensor
// stored in another format than the node runs in (one cast per tensor and
// format, before its first reader).
void Executor::insert_casts(const std::vector<Node>& nodes) {
  tensors_ = graph_.tensors();
  for (size_t t = 0; t < tensors_.size(); ++t) index_[tensors_[t].name] = int(t);
  tensor_fmt_.assign(tensors_.size(), fmt_);  // the input and the parameters (working copy)
  cast_param_.assign(tensors_.size(), -1);
  const std::vector<Format> planned = plan_precision(graph_, nodes, fmt_, level_);
  std::map<std::pair<int, Format>, std::string> casts;
  for (size_t k = 0; k < nodes.size(); ++k) {
    Node n = nodes[k];
    const Format f = planned[k];
    for (std::string& name : n.inputs) {
      const int t = index(name);
      // Token ids are uint32 and buffers (running statistics) fp32 at every level.
      if (tensors_[t].shape.ids || tensors_[t].kind == TensorKind::Buffer || tensor_fmt_[t] == f) continue;
      // Frozen weights are held once, in the storage format; a cast per
      // node format would hold them twice.
      if (tensors_[t].kind == TensorKind::Frozen)
        throw Error("graph: node '" + n.name + "' runs in " + format_name(f) + " but reads the frozen '" + name +
                    "', held in " + format_name(fmt_) + " (frozen parameters run at --amp-level O2 or O3)");
      auto [it, added] = casts.insert({{t, f}, ""});
      if (added) {
        std::string cast_name = name + "@" + format_name(f);
        while (index_.count(cast_name)) cast_name += "@";
        Tensor c = tensors_[t];
        c.name = cast_name;
        c.kind = TensorKind::Activation;
        index_[cast_name] = int(tensors_.size());
        cast_param_.push_back(tensors_[t].kind == TensorKind::Param ? t : -1);
        tensor_fmt_.push_back(f);
        tensors_.push_back(std::move(c));
        steps_.push_back(Node{cast_name, "cast", {name}, {}});
        nodes_fmt_.push_back(f);
        it->second = cast_name;
      }
      name = it->second;
    }
    tensor_fmt_[index(n.name)] = f;
    steps_.push_back(std::move(n));
    nodes_fmt_.push_back(f);
  }
}

// Which tensors need gradients (those computed from a parameter) and which
// nodes run backward (their output's gradient is defined), in topological
// order and its reverse.
void Executor::analyse() {
  const auto& tensors = tensors_;
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
    state->def = def_of(n.op);
    state->shapes.fmt = nodes_fmt_[nodes_.size()];
    state->shapes.norm_in_16_bits = level_ == AmpLevel::O3 && state->shapes.fmt != Format::F32;
    state->shapes.ctx = &ctx_;
    int out = index(n.name);
    producer_[out] = int(nodes_.size());
    for (const std::string& name : n.inputs) {
      int t = index(name);
      state->shapes.in.push_back(&tensors[t]);
      state->shapes.in_fmts.push_back(tensor_fmt_[t]);
      requires_grad_[out] = requires_grad_[out] || requires_grad_[t];
    }
    state->shapes.out = tensors[out].shape;
    if (state->def->view) root_[out] = root_[index(n.inputs[0])];
    nodes_.push_back(std::move(state));
  }
  receives_grad_[graph_.output_index()] = true;
  for (size_t k = nodes.size(); k-- > 0;) {
    int out = index(nodes[k].name);
    nodes_[k]->runs_backward = receives_grad_[out] && requires_grad_[out];
    if (!nodes_[k]->runs_backward) continue;
    for (const std::string& name : nodes[k].inputs) {
      int t = index(name);
      if (requires_grad_[t]) receives_grad_[t] = true;
    }
  }
  for (size_t k = 0; k < nodes.size(); ++k) {
    NodeState& s = *nodes_[k];
    for (const std::string& name : nodes[k].inputs)
      s.shapes.grads.push_back(s.runs_backward && requires_grad_[index(name)]);
  }
}

// Both settings of --recompute are planned, so that the memory line can
// show what the other would take; the one this executor runs is last and
// stays.
void Executor::plan() {
  plan_for(!recompute_);
  plan_for(recompute_);
}

void Executor::plan_for(bool recompute) {
  const auto& tensors = tensors_;
  const auto& nodes = steps_;
  const uint32_t N = uint32_t(nodes.size());
  const Timeline times = timeline(recompute);
  auto back_time = [&](size_t k) { return times.back[k]; };
  const int out_root = root_[graph_.output_index()];
  activation_lifetimes_.clear();
  workspace_lifetimes_.clear();
  activation_fmt_.clear();
  for (auto& s : nodes_) s->kept = s->work = s->sum = s->kept_again = -1;
  again_before_ = times.again_before;
  can_recompute_ = times.recomputable;
  // A cast of a parameter holds one copy of it (its gradient), not one per row.
  auto bytes_of = [&](int t) {
    const uint64_t rows = cast_param_[t] >= 0 ? 1 : max_rows_;
    return rows * tensors[t].shape.elements() * format_bytes(tensor_fmt_[t]);
  };

  // Activation values and gradients, by root tensor: from the producer's
  // forward to the last read, and from the first backward contribution to
  // the producer's backward. The output and its gradient have their own
  // buffers (the loss reads and writes them between the two passes). A
  // tensor no step produces (a linear's output fused into its activation)
  // has none.
  // A recomputed step's output has two: from the first forward to its last
  // read there, and from the second forward to its last read in the
  // backward.
  value_slot_.assign(tensors.size(), -1);
  grad_slot_.assign(tensors.size(), -1);
  again_slot_.assign(tensors.size(), -1);
  std::vector<std::optional<Lifetime>> grads(tensors.size());
  for (size_t t = 0; t < tensors.size(); ++t) {
    if (tensors[t].kind != TensorKind::Activation || root_[t] != int(t) || int(t) == out_root) continue;
    if (producer_[t] < 0) continue;
    uint32_t p = uint32_t(producer_[t]);
    Lifetime value{bytes_of(int(t)), p, p};
    const bool again = times.again[p] >= 0;
    Lifetime second{value.bytes, uint32_t(times.again[p]), uint32_t(times.again[p])};
    // A read in the second forward or the backward.
    auto read_later = [&](uint32_t time) {
      Lifetime& l = again ? second : value;
      l.last = std::max(l.last, time);
    };
    const NodeState& producer = *nodes_[p];
    if (producer.runs_backward && producer.def->backward_reads_output && producer.def->backward_reads_output(producer.shapes))
      read_later(back_time(p));
    Lifetime grad{bytes_of(int(t)), back_time(p), back_time(p)};
    for (size_t k = 0; k < N; ++k)
      for (const std::string& name : nodes[k].inputs) {
        int in = index(name);
        if (root_[in] != int(t)) continue;
        value.last = std::max(value.last, uint32_t(k));
        if (times.again[k] >= 0) read_later(uint32_t(times.again[k]));
        if (nodes_[k]->runs_backward && nodes_[k]->def->backward_reads_inputs) read_later(back_time(k));
        if (nodes_[k]->runs_backward && requires_grad_[in]) grad.first = std::min(grad.first, back_time(k));
      }
    if (cast_param_[t] < 0) {  // a parameter's cast reads its master
      value_slot_[t] = int(activation_lifetimes_.size());
      activation_lifetimes_.push_back(value);
      activation_fmt_.push_back(tensor_fmt_[t]);
      if (again) {
        again_slot_[t] = int(activation_lifetimes_.size());
        activation_lifetimes_.push_back(second);
        activation_fmt_.push_back(tensor_fmt_[t]);
      }
    }
    if (receives_grad_[t] && requires_grad_[t]) grads[t] = grad;
  }
  // A sum's input gradient may live in the sum's own (executor_grad_alias.cpp):
  // one buffer over all their lifetimes.
  const std::vector<int> home = sum_gradient_homes(grads);
  for (size_t t = 0; t < tensors.size(); ++t) {
    if (!grads[t] || home[t] == int(t)) continue;
    Lifetime& h = *grads[home[t]];
    h.first = std::min(h.first, grads[t]->first);
    h.last = std::max(h.last, grads[t]->last);
  }
  for (size_t t = 0; t < tensors.size(); ++t) {
    if (!grads[t] || home[t] != int(t)) continue;
    grad_slot_[t] = int(activation_lifetimes_.size());
    activation_lifetimes_.push_back(*grads[t]);
    activation_fmt_.push_back(tensor_fmt_[t]);
  }
  for (size_t t = 0; t < tensors.size(); ++t)
    if (grads[t]) grad_slot_[t] = grad_slot_[home[t]];

  // Op scratch, and a buffer for a contribution that a kernel can only
  // overwrite but that must be added (found by replaying the backward order).
  std::vector<bool> written(tensors.size(), false);
  written[out_root] = true;
  for (size_t k = N; k-- > 0;) {
    NodeState& s = *nodes_[k];
    const size_t eb = format_bytes(s.shapes.fmt);
    auto scratch = [&](uint64_t per_row, uint32_t first, uint32_t last) {
      workspace_lifetimes_.push_back({uint64_t(max_rows_) * per_row * eb, first, last});
      return int(workspace_lifetimes_.size() - 1);
    };
    // A recomputed step's kept scratch, as its output: the backward reads
    // what the second forward wrote.
    const uint64_t kept = s.def->kept_per_row ? s.def->kept_per_row(s.shapes) : 0;
    if (kept && times.again[k] >= 0) {
      const uint32_t again = uint32_t(times.again[k]);
      s.kept = scratch(kept, uint32_t(k), uint32_t(k));
      s.kept_again = scratch(kept, again, s.runs_backward ? back_time(k) : again);
    } else if (kept) {
      s.kept = scratch(kept, uint32_t(k), s.runs_backward ? back_time(k) : uint32_t(k));
    }
    if (!s.runs_backward) continue;
    if (s.def->workspace_per_row && s.def->workspace_per_row(s.shapes))
      s.work = scratch(s.def->workspace_per_row(s.shapes), back_time(k), back_time(k));
    uint64_t sum_per_row = 0;
    for (size_t i = 0; i < s.shapes.in.size(); ++i) {
      int r = root_[index(nodes[k].inputs[i])];
      if (!s.shapes.grads[i] || tensors[r].kind == TensorKind::Param) continue;
      if (written[r]) sum_per_row = std::max<uint64_t>(sum_per_row, tensors[r].shape.elements());
      written[r] = true;
    }
    if (sum_per_row) s.sum = scratch(sum_per_row, back_time(k), back_time(k));
  }
  const BlockLayout blocks = block_layout();
  activation_plan_ = plan_memory(activation_lifetimes_, blocks);
  workspace_plan_ = plan_memory(workspace_lifetimes_, blocks);
  pool_bytes_by_recompute_[recompute] = {activation_plan_.pool_bytes, workspace_plan_.pool_bytes};
}

std::map<Format, uint64_t> Executor::activation_bytes_by_format() const {
  std::map<Format, uint64_t> out;
  for (size_t i = 0; i < activation_lifetimes_.size(); ++i) out[activation_fmt_[i]] += activation_lifetimes_[i].bytes;
  out[fmt_] += 2 * output_bytes_;
  return out;
}

uint64_t Executor::activation_unshared_bytes() const {
  return activation_plan_.unshared_bytes + 2 * output_bytes_;
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
