#include "vkamp/train/model.hpp"

namespace vkamp::train {

Model::Model(Context& ctx, const models::ModelSpec& spec, Format fmt, uint32_t max_rows, uint64_t seed, bool moments1,
             bool moments2, graph::AmpLevel level, bool recompute)
    : Model(ctx, build_graph(spec), fmt, max_rows, seed, moments1, moments2, level, recompute) {
  spec_ = spec;
}

Model::Model(Context& ctx, graph::Graph g, Format fmt, uint32_t max_rows, uint64_t seed, bool moments1,
             bool moments2, graph::AmpLevel level, bool recompute)
    : graph_(std::move(g)), fmt_(fmt) {
  params_ = std::make_unique<graph::ParamStore>(ctx, graph_, fmt, seed, moments1, moments2);
  frozen_ = std::make_unique<graph::FrozenStore>(ctx, graph_, fmt, seed);
  buffers_ = std::make_unique<graph::BufferStore>(ctx, graph_);
  executor_ = std::make_unique<graph::Executor>(ctx, graph_, fmt, max_rows, *params_, *buffers_, level, frozen_.get(),
                                                recompute);
}

graph::MemoryReport Model::memory() const {
  graph::MemoryReport r;
  r.parameters = params_->parameter_bytes() + buffers_->bytes() + executor_->node_state_bytes();
  r.optimizer_state = params_->optimizer_bytes();
  r.frozen = frozen_->bytes();
  r.activations = executor_->activation_bytes();
  r.activations_unshared = executor_->activation_unshared_bytes();
  r.activations_by_format = executor_->activation_bytes_by_format();
  r.recompute = executor_->recomputes();
  if (executor_->can_recompute()) {
    r.activations_other_recompute = executor_->activation_bytes(!r.recompute);
    r.workspace_other_recompute = executor_->workspace_bytes(!r.recompute);
  }
  r.workspace = executor_->workspace_bytes();
  return r;
}

}  // namespace vkamp::train
