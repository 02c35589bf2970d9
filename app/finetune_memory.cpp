#include "app/finetune_memory.hpp"

#include "vkamp/models/llama.hpp"
#include "vkamp/train/memory_budget.hpp"
#include "vkamp/train/model.hpp"

namespace vkamp::app {

namespace {

std::string mib(uint64_t bytes) { return train::mib_text(bytes, 0) + " MiB"; }

}  // namespace

graph::MemoryReport finetune_plan(Context& ctx, const RunOptions& cfg, const FineTuneSource& source) {
  const bool sgd = cfg.optimizer.kind == config::OptimizerKind::SGD;
  const bool m1 = !sgd || cfg.optimizer.momentum > 0, m2 = !sgd;
  const graph::Graph g = finetune_graph(cfg.ft, source);
  // As the Trainer builds it: the head in chunks where it can (logit_chunks.hpp).
  train::LogitChunking chunking;
  if (cfg.scaler.mode != config::LossScaleMode::PerLayer) chunking = train::LogitChunking::from_env();
  return train::Model::plan(ctx, g, cfg.precision, cfg.batch, m1, m2, cfg.amp_level, cfg.recompute, chunking);
}

void check_finetune_memory(Context& ctx, const RunOptions& cfg, const FineTuneSource& source) {
  const graph::MemoryReport plan = finetune_plan(ctx, cfg, source);
  try {
    train::check_memory_fits(ctx, plan);
  } catch (const train::MemoryPlanError& e) {
    const uint64_t available = e.budget;
    std::string fits;
    auto tried = [&](const std::string& flag, const RunOptions& other) {
      const uint64_t total = finetune_plan(ctx, other, source).total();
      if (total > available) return false;
      fits += (fits.empty() ? "" : "; ") + flag + " (" + mib(total) + ")";
      return true;
    };
    // The plan made both settings of --recompute (Executor::activation_bytes(bool)).
    if (!cfg.recompute && plan.activations_other_recompute && plan.total_other_recompute() <= available)
      fits += "--recompute (" + mib(plan.total_other_recompute()) + ")";
    for (uint32_t b = cfg.batch / 2; b >= 1; b /= 2) {
      RunOptions o = cfg;
      o.batch = b;
      if (tried("--batch " + std::to_string(b), o)) break;
    }
    for (uint32_t s = cfg.ft.seq_len / 2; s >= 16; s /= 2) {
      RunOptions o = cfg;
      o.ft.seq_len = s;
      if (tried("--seq-len " + std::to_string(s), o)) break;
    }
    if (cfg.ft.lora_rank && cfg.ft.lora_targets.size() > 2) {
      RunOptions o = cfg;
      o.ft.lora_targets = {"q_proj", "v_proj"};
      tried("--lora-targets q_proj,v_proj", o);
    }
    std::string msg = e.what();
    if (!fits.empty()) msg += " Settings that fit, each alone: " + fits + ".";
    else if (plan.frozen > available)
      msg += " The frozen base alone (" + mib(plan.frozen) + ") passes what is available (" + mib(available) +
             "): no setting of this run fits on this device.";
    else
      msg += std::string(" No smaller --batch, --seq-len or set of --lora-targets") + (cfg.recompute ? "" : ", nor --recompute,") +
             " alone fits: combine them.";
    throw train::MemoryPlanError(msg, plan, available);
  }
}

}  // namespace vkamp::app
