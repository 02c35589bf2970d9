// Executor: recording a step's forward and backward (the plan is made in
// executor.cpp).
#include <algorithm>

#include "vkamp/error.hpp"
#include "vkamp/graph/executor.hpp"
#include "vkamp/ops/add.hpp"
#include "vkamp/ops/scale.hpp"
#include "executor_state.hpp"

namespace vkamp::graph {


// The buffers of one node, from the plan.
class Executor::Run : public OpRun {
 public:
  Run(Executor& e, Sequence& seq, uint32_t rows, size_t k, Buffer* train_state)
      : OpRun(seq, e.nodes_[k]->shapes.fmt, rows, e.nodes_[k]->shapes), e_(e), state_(*e.nodes_[k]), node_(e.steps_[k]), k_(k),
        train_state_(train_state) {
    mode = e.mode_;
    micro_batch = e.micro_batch_;
    micro_batches = e.micro_batches_;
    synced_ranks = e.synced_ranks_;
  }

  BufferView in(size_t i) override { return value(index(i)); }
  BufferView master(size_t i) override {
    int r = e_.root_[index(i)];
    if (e_.cast_param_[r] >= 0) r = e_.cast_param_[r];  // an O1 cast of the parameter
    if (e_.tensors_[r].kind != TensorKind::Param)
      throw Error("graph: node '" + node_.name + "' asked for the master of '" + node_.inputs.at(i) + "', no parameter");
    return e_.params_->view(e_.params_->master(), e_.params_->of(r));
  }
  BufferView node_state() override {
    if (e_.node_state_offset_[k_] < 0) throw Error("graph: node '" + node_.name + "' keeps no state");
    return BufferView(*e_.node_state_, size_t(e_.node_state_offset_[k_]) * 4, size_t(e_.node_state_floats_[k_]) * 4);
  }
  RandomSource random() override {
    RandomSource r = e_.random_;
    if (!r.counter) {
      if (!e_.zero_counter_) {
        e_.zero_counter_ = std::make_unique<Buffer>(e_.ctx_, 4);
        e_.zero_counter_->fill(0);
      }
      r.counter = e_.zero_counter_.get();
      r.counter_word = 0;
    }
    return r;
  }
  Buffer& train_state() override {
    if (!train_state_) throw Error("graph: node '" + node_.name + "' read the step's state outside a commit");
    return *train_state_;
  }
  std::optional<quant::GgmlType> blocks(size_t i) override {
    const int r = e_.root_[index(i)];
    if (e_.tensors_[r].kind != TensorKind::Frozen) return std::nullopt;
    return e_.frozen_->of(r).blocks;
  }
  BufferView out() override { return value(e_.index(node_.name)); }
  BufferView kept() override { return workspace_slot(kept_of(state_)); }
  const Node& producer(size_t i) override { return e_.steps_[producer_step(i)]; }
  BufferView producer_kept(size_t i) override { return workspace_slot(kept_of(*e_.nodes_[producer_step(i)])); }
  BufferView workspace() override { return workspace_slot(state_.work); }
  BufferView dout() override { return gradient(e_.index(node_.name)); }
  bool wants_grad(size_t i) override { return state_.shapes.grads.at(i); }
  // Input i's gradient and its element count, once this node has written it.
  BufferView input_grad(size_t i) { return gradient(index(i)); }
  uint32_t input_elements(size_t i) { return rows * e_.tensors_[index(i)].shape.elements(); }

  GradTarget grad(size_t i) override {
    if (!wants_grad(i)) throw Error("graph: node '" + node_.name + "' asked for a gradient nobody needs");
    int r = e_.root_[index(i)];
    bool acc = e_.written_[r] || (e_.tensors_[r].kind == TensorKind::Param && e_.accumulate_params_);
    const int out = e_.root_[e_.index(node_.name)];
    const bool holds_dout = !acc && e_.tensors_[r].kind == TensorKind::Activation && e_.grad_slot_[r] >= 0 &&
                            e_.grad_slot_[r] == e_.grad_slot_[out];
    e_.written_[r] = true;
    return {gradient(r), acc, holds_dout};
  }

  void overwrite_grad(size_t i, const std::function<void(BufferView)>& write) override {
    GradTarget g = grad(i);
    if (!g.accumulate) return write(g.view);
    uint32_t n = rows * e_.tensors_[index(i)].shape.elements();
    BufferView tmp = workspace_slot(state_.sum);
    write(tmp);
    ops::add_forward(seq, fmt, g.view, tmp, g.view, n);
  }

  Sequence& sync(BufferView v, HostSync rule) override {
    if (synced_ranks == 1 || !e_.host_sync_cut_ || v.buffer != e_.node_state_.get())
      throw Error("graph: node '" + node_.name + "' asked for a host sync outside a --sync-bn training step");
    e_.seq_ = &e_.host_sync_cut_(*e_.seq_, *e_.node_state_, v.offset, v.bytes, rule);
    return *e_.seq_;
  }

 private:
  int index(size_t i) const { return e_.index(node_.inputs.at(i)); }
  size_t producer_step(size_t i) const {
    const int p = e_.producer_[index(i)];
    if (p < 0) throw Error("graph: input '" + node_.inputs.at(i) + "' of node '" + node_.name + "' has no producer");
    return size_t(p);
  }

  BufferView value(int t) {
    int r = e_.root_[t];
    const Tensor& tensor = e_.tensors_[r];
    if (tensor.kind == TensorKind::Param) return e_.params_->view(e_.params_->working(), e_.params_->of(r));
    if (tensor.kind == TensorKind::Frozen) return e_.frozen_->view(e_.frozen_->of(r));
    if (tensor.kind == TensorKind::Buffer) return e_.buffers_->view(e_.buffers_->of(r));
    if (e_.cast_param_[r] >= 0) return e_.params_->view(e_.params_->master(), e_.params_->of(e_.cast_param_[r]));
    if (tensor.kind == TensorKind::Input) return *e_.x_;
    if (r == e_.root_[e_.graph_.output_index()]) return *e_.output_;
    // A recomputed value: the backward reads the second forward's.
    const int again = e_.in_backward_ ? e_.again_slot_[r] : -1;
    return slot(*e_.activation_pool_, e_.activation_plan_, e_.activation_lifetimes_, again >= 0 ? again : e_.value_slot_[r]);
  }
  int kept_of(const NodeState& s) const { return e_.in_backward_ && s.kept_again >= 0 ? s.kept_again : s.kept; }

  BufferView gradient(int t) {
    int r = e_.root_[t];
    const Tensor& tensor = e_.tensors_[r];
    if (tensor.kind == TensorKind::Param) return e_.params_->view(e_.params_->grads(), e_.params_->of(r));
    if (r == e_.root_[e_.graph_.output_index()]) return *e_.doutput_;
    if (e_.grad_slot_[r] < 0) throw Error("graph: tensor '" + tensor.name + "' has no gradient buffer");
    return slot(*e_.activation_pool_, e_.activation_plan_, e_.activation_lifetimes_, e_.grad_slot_[r]);
  }

  BufferView workspace_slot(int s) {
    if (s < 0) throw Error("graph: node '" + node_.name + "' has no such scratch buffer");
    return slot(*e_.workspace_pool_, e_.workspace_plan_, e_.workspace_lifetimes_, s);
  }

  static BufferView slot(const DeviceBlocks& pool, const MemoryPlan& plan, const std::vector<Lifetime>& l, int s) {
    return pool.view(plan.offsets[s], l[s].bytes);
  }

  Executor& e_;
  NodeState& state_;
  const Node& node_;
  size_t k_;
  Buffer* train_state_;
};

void Executor::run_node(uint32_t rows, size_t k, const std::function<void(OpRun&)>& what, Buffer* train_state) {
  Run run(*this, *seq_, rows, k, train_state);
  what(run);
}

void Executor::set_host_sync(uint32_t ranks, HostSyncCut cut) {
  if (ranks == 0 || (ranks > 1 && !cut)) throw Error("Executor: a host sync needs ranks >= 1 and, above 1, a cut");
  synced_ranks_ = ranks;
  host_sync_cut_ = ranks > 1 ? std::move(cut) : HostSyncCut{};
}

Sequence& Executor::record_forward(Sequence& seq, BufferView x, uint32_t rows, ForwardMode mode, uint32_t micro_batch) {
  if (rows > max_rows_) throw Error("Model: " + std::to_string(rows) + " rows > " + std::to_string(max_rows_));
  if (micro_batch >= micro_batches_)
    throw Error("Model: micro-batch " + std::to_string(micro_batch) + " of " + std::to_string(micro_batches_));
  x_ = x;
  mode_ = mode;
  micro_batch_ = micro_batch;
  seq_ = &seq;
  in_backward_ = false;
  for (size_t k = 0; k < nodes_.size(); ++k) {
    if (nodes_[k]->def->view) continue;  // the same bytes, read with another shape
    run_node(rows, k, nodes_[k]->def->forward);
  }
  return *seq_;
}

void Executor::record_commit(Sequence& seq, Buffer& train_state, uint32_t rows) {
  seq_ = &seq;
  for (size_t k = 0; k < nodes_.size(); ++k)
    if (nodes_[k]->def->commit) run_node(rows, k, nodes_[k]->def->commit, &train_state);
}

Sequence& Executor::record_backward(Sequence& seq, BufferView x, uint32_t rows, bool accumulate) {
  if (rows > max_rows_) throw Error("Model: " + std::to_string(rows) + " rows > " + std::to_string(max_rows_));
  if (mode_ != ForwardMode::Training) throw Error("Model: a backward needs a training-mode forward");
  x_ = x;
  accumulate_params_ = accumulate;
  written_.assign(tensors_.size(), false);
  written_[root_[graph_.output_index()]] = true;  // the loss's gradient
  seq_ = &seq;
  in_backward_ = true;
  for (size_t k = nodes_.size(); k-- > 0;) {
    // --recompute: the block's forward again, before its first backward.
    for (size_t j : again_before_[k]) run_node(rows, j, nodes_[j]->def->forward);
    if (!nodes_[k]->runs_backward) continue;
    Run run(*this, *seq_, rows, k, nullptr);
    nodes_[k]->def->backward(run);
    // Per-layer loss scaling: the gradient leaving this group for the one
    // upstream takes that group's scale. A separate in-place pass, so the
    // gradient was rounded once already at this group's scale: exact for a
    // power-of-two factor unless that first rounding was subnormal.
    const int g = rescale_factors_ && nodes_[k]->shapes.grads.at(0) ? rescale_group_[k] : -1;
    if (g >= 0)
      ops::scale(*seq_, run.fmt, run.input_grad(0), run.input_grad(0), run.input_elements(0), 1.0f,
                 ops::ScaleBy::BufferValue, rescale_factors_, uint32_t(g));
  }
  in_backward_ = false;
  return *seq_;
}

void Executor::set_group_rescale(const Buffer* factors, ScaleGroups groups) {
  rescale_factors_ = factors;
  rescale_group_.assign(steps_.size(), -1);
  for (size_t g = 0; g < groups.groups.size(); ++g)
    if (groups.groups[g].upstream >= 0) rescale_group_[groups.groups[g].step] = int(g);
}

}  // namespace vkamp::graph
