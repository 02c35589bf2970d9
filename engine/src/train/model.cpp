#include "vkamp/train/model.hpp"

#include <algorithm>

#include "vkamp/config_error.hpp"
#include "vkamp/error.hpp"
#include "vkamp/train/memory_budget.hpp"

namespace vkamp::train {

Model::Model(Context& ctx, const models::ModelSpec& spec, Format fmt, uint32_t max_rows, uint64_t seed, bool moments1,
             bool moments2, graph::AmpLevel level, bool recompute, LogitChunking chunking)
    : Model(ctx, build_graph(spec), fmt, max_rows, seed, moments1, moments2, level, recompute, chunking) {
  spec_ = spec;
}

Model::Model(Context& ctx, graph::Graph g, Format fmt, uint32_t max_rows, uint64_t seed, bool moments1,
             bool moments2, graph::AmpLevel level, bool recompute, LogitChunking chunking)
    : graph_(std::move(g)), fmt_(fmt) {
  const Head head = chunked_head(ctx, graph_, fmt, max_rows, level, chunking);
  body_ = head.rows ? graph_.without_output_node() : graph_;
  // Planned first, then checked against the device's budget: a run that
  // cannot fit stops here with nothing allocated.
  executor_ = std::make_unique<graph::Executor>(ctx, body_, fmt, max_rows, level, recompute);
  plan_ = planned_for(ctx, graph_, fmt_, *executor_, moments1, moments2, head, max_rows);
  check_memory_fits(ctx, plan_);
  check_binding_fits(ctx);
  params_ = std::make_unique<graph::ParamStore>(ctx, graph_, fmt, seed, moments1, moments2);
  frozen_ = std::make_unique<graph::FrozenStore>(ctx, graph_, fmt, seed);
  buffers_ = std::make_unique<graph::BufferStore>(ctx, graph_);
  executor_->allocate(*params_, *buffers_, frozen_.get());
  if (head.rows)
    chunks_ = std::make_unique<LogitChunks>(ctx, *head.head, fmt, max_rows * head.head->positions, head.rows);
}

Model::Head Model::chunked_head(const Context& ctx, const graph::Graph& g, Format fmt, uint32_t max_rows,
                                graph::AmpLevel level, LogitChunking chunking) {
  Head h;
  if (!chunking.on) return h;
  h.head = LogitChunks::find(g, level);
  if (h.head) h.rows = LogitChunks::chunk_rows(ctx, *h.head, fmt, max_rows * h.head->positions, chunking.rows);
  return h;
}

graph::MemoryReport Model::plan(Context& ctx, const graph::Graph& g, Format fmt, uint32_t max_rows, bool moments1,
                                bool moments2, graph::AmpLevel level, bool recompute, LogitChunking chunking) {
  const Head head = chunked_head(ctx, g, fmt, max_rows, level, chunking);
  const graph::Graph body = head.rows ? g.without_output_node() : g;
  graph::Executor executor(ctx, body, fmt, max_rows, level, recompute);
  return planned_for(ctx, g, fmt, executor, moments1, moments2, head, max_rows);
}

Buffer& Model::output() {
  if (chunks_)
    throw Error("the model's logits are never whole: its loss runs them in chunks of " +
                std::to_string(chunks_->chunk_rows()) + " rows (VKAMP_LOGIT_CHUNK=off keeps them whole)");
  return executor_->output();
}

Buffer& Model::doutput() {
  output();  // the same Error
  return executor_->doutput();
}

BufferView Model::head_weight() const {
  if (!chunks_) throw Error("the model's head does not run in chunks");
  return frozen_->view(frozen_->of(chunks_->head().weight));
}

graph::MemoryReport Model::planned_for(Context& ctx, const graph::Graph& g, Format fmt, const graph::Executor& e,
                                       bool moments1, bool moments2, const Head& head, uint32_t max_rows) {
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
  // The executor's output and its gradient are the logits, or (chunked)
  // the head's input, beside one chunk's logits and their gradient.
  const uint64_t chunk = head.rows ? LogitChunks::bytes(*head.head, fmt, head.rows) : 0;
  r.activations = e.activation_bytes() + chunk;
  r.activations_unshared = e.activation_unshared_bytes() + chunk;
  r.activations_by_format = e.activation_bytes_by_format();
  if (chunk) r.activations_by_format[fmt] += chunk;
  r.logits = head.rows ? chunk : 2 * uint64_t(max_rows) * g.output_tensor().shape.elements() * format_bytes(fmt);
  r.workspace = e.workspace_bytes();
  add_other_recompute(r, e);
  if (r.activations_other_recompute) r.activations_other_recompute += chunk;
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
  const uint64_t chunk = chunks_ ? chunks_->bytes() : 0;
  r.activations += chunk;
  r.activations_unshared += chunk;
  if (chunk) r.activations_by_format[fmt_] += chunk;
  if (r.activations_other_recompute) r.activations_other_recompute += chunk;
  r.logits = chunks_ ? chunk : plan_.logits;
  return r;
}

}  // namespace vkamp::train
