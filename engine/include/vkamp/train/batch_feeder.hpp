// What feeds the step its batches: the training set, resident on the GPU in
// the storage format, one seeded permutation per epoch, and the gather
// dispatches that copy micro-batch m of the current step (TrainState.cursor)
// into the batch buffers the model reads.
#pragma once
#include <cstdint>
#include <memory>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/sequence.hpp"
#include "vkamp/train/host_data.hpp"

namespace vkamp::train {

class BatchFeeder {
 public:
  // `outputs`: the model's outputs (the width of an MSE target row).
  // Throws ConfigError for a label out of range, Error for bad sizes.
  BatchFeeder(Context& ctx, Format fmt, LossKind loss, const HostData& train, uint32_t outputs, uint32_t batch,
              uint32_t epochs, uint64_t seed);

  uint32_t count() const { return count_; }
  uint32_t features() const { return features_; }
  uint32_t steps_per_epoch() const { return count_ / batch_; }

  // Records the gathers of micro-batch `micro` of the step whose cursor is in `state`.
  void record_gather(Sequence& seq, Buffer& state, uint32_t micro);
  Buffer& batch_x() { return *batch_x_; }
  Buffer& batch_y() { return *batch_y_; }  // labels (uint32) or targets (fmt)

 private:
  void upload_targets(Context& ctx, const HostData& train);
  void upload_permutations(Context& ctx, uint64_t seed);

  Format fmt_;
  LossKind loss_;
  uint32_t count_, features_, outputs_, batch_;
  uint32_t epochs_stored_;
  std::unique_ptr<Buffer> data_x_, data_y_, perm_, batch_x_, batch_y_;
};

}  // namespace vkamp::train
