#include "vkamp/train/model.hpp"

#include <algorithm>

#include "vkamp/config_error.hpp"
#include "vkamp/train/memory_budget.hpp"

namespace vkamp::train {

Model::Model(Context& ctx, const models::ModelSpec& spec, Format fmt, uint32_t max_rows, uint64_t seed, bool moments1,
             bool moments2, graph::AmpLevel level, bool recompute)
    : Model(ctx, build_graph(spec), fmt, max_rows, seed, moments1, moments2, level, recompute) {
  spec_ = spec;
}

Model::Model(Context& ctx, graph::Graph g, Format fmt, uint32_t max_rows, uint64_t seed, bool moments1,
             bool moments2, graph::AmpLevel level, bool recompute)
    : graph_(std::move(g)), fmt_(fmt) {
  // Planned first, then checked against the device's budget: a run that
  // cannot fit stops here with nothing allocated.
  executor_ = std::make_unique<graph::Executor>(ctx, graph_, fmt, max_rows, level, recompute);
  plan_ = planned(ctx, *executor_, moments1, moments2);
  check_memory_fits(ctx, plan_);
  check_binding_fits(ctx);
  params_ = std::make_unique<graph::ParamStore>(ctx, graph_, fmt, seed, moments1, moments2);
  frozen_ = std::make_unique<graph::FrozenStore>(ctx, graph_, fmt, seed);
  buffers_ = std::make_unique<graph::BufferStore>(ctx, graph_);
  executor_->allocate(*params_, *buffers_, frozen_.get());
}

graph::MemoryReport Model::plan(Context& ctx, const graph::Graph& g, Format fmt, uint32_t max_rows, bool moments1,
                                bool moments2, graph::AmpLevel level, bool recompute) {
  graph::Executor executor(ctx, g, fmt, max_rows, level, recompute);
  return planned_for(ctx, g, fmt, executor, moments1, moments2);
}

graph::MemoryReport Model::planned(Context& ctx, const graph::Executor& e, bool moments1, bool moments2) const {
  return planned_for(ctx, graph_, fmt_, e, moments1, moments2);
}

graph::MemoryReport Model::planned_for(Context& ctx, const graph::Graph& g, Format fmt, const graph::Executor& e,
                                       bool moments1, bool moments2) {
  graph::MemoryReport r;
  uint32_t params = 0, buffers = 0;
  graph::layout_params(g, &params);
  graph::layout_buffers(g, &buffers);
  const uint64_t p = std::max<uint64_t>(params, 1);
  r.parameters = p * (4 + 2 * format_bytes(fmt)) + uint64_t(buffers) * 4 + e.node_state_bytes();
  r.optimizer_state = (moments1 ? p * 4 : 4) + (moments2 ? p * 4 : 4);
  uint64_t frozen_end = 0;
  graph::FrozenStore::layout(g, fmt, BlockLayout::of(ctx), &frozen_end);
  r.frozen = frozen_end;
  r.activations = e.activation_bytes();
  r.activations_unshared = e.activation_unshared_bytes();
  r.activations_by_format = e.activation_bytes_by_format();
  r.workspace = e.workspace_bytes();
  add_other_recompute(r, e);
  return r;
}

// --recompute: the executor planned both settings; the report names the other.
void Model::add_other_recompute(graph::MemoryReport& r, const graph::Executor& e) {
  r.recompute = e.recomputes();
  if (!e.can_recompute()) return;
  r.activations_other_recompute = e.activation_bytes(!r.recompute);
  r.workspace_other_recompute = e.workspace_bytes(!r.recompute);
}

// Ops take a tensor larger than one binding in views of whole rows, and
// the optimizer and the AMP pass bind each flat parameter buffer whole.
void Model::check_binding_fits(const Context& ctx) const {
  const uint64_t limit = ctx.info().max_storage_range;
  const std::string lowered = ctx.info().capped.empty() ? "" : ", lowered by " + ctx.info().capped;
  for (const graph::Tensor& t : graph_.tensors()) {
    if (t.kind == graph::TensorKind::Activation || t.dims.empty()) continue;
    const uint64_t row = uint64_t(t.dims.back()) * 4;  // fp32 at most
    if (row > limit)
      throw ConfigError("one row of " + t.name + " takes " + std::to_string(row) + " bytes, more than " +
                        ctx.info().name + " binds at once (maxStorageBufferRange " + std::to_string(limit) +
                        " bytes" + lowered + "): vkamp cannot work with a binding below one row");
  }
  uint32_t params = 0;
  graph::layout_params(graph_, &params);
  const uint64_t master = uint64_t(params) * 4;
  if (master <= limit) return;
  throw ConfigError("the trained parameters' fp32 masters take " + std::to_string(master) + " bytes, more than " +
                    ctx.info().name + " binds at once (maxStorageBufferRange " + std::to_string(limit) + " bytes" +
                    lowered + "); vkamp's optimizer binds them whole: train fewer tensors (LoRA: --lora-rank, "
                    "--lora-targets)");
}

graph::MemoryReport Model::memory() const {
  graph::MemoryReport r;
  r.parameters = params_->parameter_bytes() + buffers_->bytes() + executor_->node_state_bytes();
  r.optimizer_state = params_->optimizer_bytes();
  r.frozen = frozen_->bytes();
  r.activations = executor_->activation_bytes();
  r.activations_unshared = executor_->activation_unshared_bytes();
  r.activations_by_format = executor_->activation_bytes_by_format();
  add_other_recompute(r, *executor_);
  r.workspace = executor_->workspace_bytes();
  return r;
}

}  // namespace vkamp::train
