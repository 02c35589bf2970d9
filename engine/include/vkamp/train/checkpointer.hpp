// Checkpoints of a training run: the fp32 masters, the graph's buffers
// (BatchNorm's running statistics, section "buffers", when it has any), the
// optimizer moments,
// the GPU TrainState, --loss-scale auto's state (section "auto_scale"; a
// checkpoint without it loads as a fresh one) and the seed (the data
// order), in the file format of
// checkpoint_file.hpp. A checkpoint loads only into the same model,
// precision and seed.
#pragma once
#include <cstdint>
#include <string>

#include "vkamp/train/gpu_state.hpp"
#include "vkamp/train/layer_scales.hpp"
#include "vkamp/train/model.hpp"

namespace vkamp::train {

class Checkpointer {
 public:
  // layers: per-layer loss scaling's state, saved and restored beside the
  // TrainState (section "layer_scales"); nullptr in the other modes.
  Checkpointer(Model& model, uint64_t seed, LayerScales* layers = nullptr)
      : model_(model), seed_(seed), layers_(layers) {}

  // The caller has waited for the steps in flight. Throws CheckpointError.
  void save(const std::string& path, const TrainState& st, const AutoScaleState& auto_scale) const;
  // Writes the masters (and working copy) and moments into the model and
  // returns the saved state, and the auto scaler's into `auto_scale`.
  // Throws CheckpointError naming what differs.
  TrainState load(const std::string& path, AutoScaleState& auto_scale) const;

 private:
  std::string meta() const;

  Model& model_;
  uint64_t seed_;
  LayerScales* layers_;
};

}  // namespace vkamp::train
