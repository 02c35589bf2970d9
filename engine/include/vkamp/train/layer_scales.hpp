// Per-layer loss scaling (--loss-scale per-layer): one loss
// scale per scale group of the model (graph/scale_groups.hpp), kept on the
// GPU with its amax history (layer_scale.h) and updated every step by
// layer_scale.comp, with no host read. The backward multiplies each
// group's input gradient by S_upstream / S_g (Executor::set_group_rescale);
// the optimizer unscales each parameter by its own group's scale.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/config/train_config.hpp"
#include "vkamp/graph/scale_groups.hpp"
#include "vkamp/sequence.hpp"
#include "vkamp/train/gpu_state.hpp"
#include "vkamp/train/model.hpp"

namespace vkamp::train {

#include "vkamp/gpu_abi/layer_scale_state.h"
static_assert(sizeof(LayerScale) == (8 + kLayerAmaxHistory) * 4);

class LayerScales {
 public:
  // Throws vkamp::ConfigError when the model is not a chain of layers (or
  // has no parameters), vkamp::Error when fixed_layer_scales does not give
  // one scale per group.
  LayerScales(Context& ctx, Model& model, const config::ScalerConfig& sc);

  const graph::ScaleGroups& groups() const { return groups_; }
  uint32_t count() const { return uint32_t(groups_.groups.size()); }
  // Per parameter tensor (Model::tensors()), its group.
  const std::vector<uint32_t>& tensor_group() const { return tensor_group_; }
  // The scale the loss gradient carries at the start (the output group's).
  float output_scale() const;

  Buffer& layers() { return *layers_; }
  Buffer& factors() { return *factors_; }
  Buffer& tensor_groups() { return *tensor_groups_; }  // tensor_group() on the GPU

  // Records layer_scale.comp, after step_control. records and stats: the
  // rings of StepRecords and of per-tensor TensorStats step_control writes
  // (StepRing::records(), StepRing::tensor_stats()).
  void record_update(Sequence& seq, Buffer& state, Buffer& params, Buffer& stats, Buffer& records);

  // Host copies (the caller has waited for the steps in flight): for the
  // run summary, the studio, and checkpoints. write() also sets the factors.
  std::vector<LayerScale> read() const;
  void write(const std::vector<LayerScale>& layers);

 private:
  Context& ctx_;
  graph::ScaleGroups groups_;
  std::vector<uint32_t> tensor_group_;
  float format_max_, format_tiny_;  // largest finite and smallest positive values of the format
  std::unique_ptr<Buffer> layers_, factors_, tensor_groups_;
};

}  // namespace vkamp::train
