// A fine-tune's device memory against the device's budget before anything
// is allocated, and when it cannot fit, the settings that would.
#pragma once
#include "app/finetune_job.hpp"
#include "app/run_options.hpp"
#include "vkamp/context.hpp"
#include "vkamp/graph/memory_plan.hpp"

namespace vkamp::app {

// The plan of the run `cfg` asks for (its graph on ctx's device).
graph::MemoryReport finetune_plan(Context& ctx, const RunOptions& cfg, const FineTuneSource& source);
// Throws train::MemoryPlanError (exit 2) when the plan passes the budget:
// its split, and each setting that alone would fit (--recompute, a smaller
// --batch or --seq-len, fewer --lora-targets) or why none can.
void check_finetune_memory(Context& ctx, const RunOptions& cfg, const FineTuneSource& source);

}  // namespace vkamp::app
