// The GPU-resident training state (TrainState), the host's settings for the
// step shaders (TrainParams), the per-step record (StepRecord) and the
// histogram layout, as C++ types, and --loss-scale auto's state and chooser:
// the definitions are train_state.h and scale_choice.h, which the shaders
// include too, so the two sides cannot drift apart.
#pragma once
#include <algorithm>
#include <cstdint>

namespace vkamp::train {

using uint = uint32_t;  // GLSL's name, which train_state.h uses
#include "vkamp/gpu_abi/train_state.h"
#include "vkamp/gpu_abi/scale_choice.h"

// Every field is 4 bytes: std430 then lays the structs out like C.
static_assert(sizeof(TrainState) == 24 * 4);
static_assert(sizeof(TrainParams) == 37 * 4);
static_assert(sizeof(StepRecord) == 20 * 4);
static_assert(sizeof(TensorStats) == 5 * 4);
static_assert(sizeof(AutoScaleState) == (13 + kHistLogBins) * 4);

}  // namespace vkamp::train
