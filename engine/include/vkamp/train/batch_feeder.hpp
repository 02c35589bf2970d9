// What feeds the step its batches. The training set lives either in device
// memory (resident) or in host memory (streamed); either way the host
// stages, a few steps ahead, what each micro-batch needs into a small
// host-visible ring of slots, and the recorded step's gather reads slot
// (TrainState.cursor + m) mod slots. Resident, a slot holds the batch's
// example ids and the gather reads the rows from the set on the GPU;
// streamed, a slot holds the rows themselves. The host never waits for the
// GPU to stage: the slots it writes belong to micro-batches no step in
// flight can read (see stage()).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/sequence.hpp"
#include "vkamp/config/train_config.hpp"
#include "vkamp/train/epoch_order.hpp"
#include "vkamp/data/host_data.hpp"
#include "vkamp/train/loss_kind.hpp"

namespace vkamp::train {

// This process's share of every global micro-batch in a data-parallel run:
// the `ranks` processes together read ranks x batch consecutive rows of the
// epoch order, and rank r the contiguous rows [r x batch, (r+1) x batch).
struct DataShare {
  uint32_t rank = 0, ranks = 1;
};

// What the model reads and predicts, as the feeder lays out a batch.
struct FeedLayout {
  uint32_t outputs = 0;    // per example: the width of an MSE target row
  uint32_t positions = 1;  // SoftmaxXent: labels per example, one per output position
  uint32_t classes = 0;    // SoftmaxXent: a label must be below this
  bool ids = false;        // x holds token ids (uint32), not values in the storage format
};

class BatchFeeder {
 public:
  // `steps_ahead`: how many steps the host may submit before reading the
  // first one's record. Throws ConfigError for a label out of range, Error
  // for bad sizes.
  BatchFeeder(Context& ctx, const config::TrainConfig& cfg, LossKind loss, const data::HostData& train, FeedLayout layout,
              uint32_t steps_ahead, DataShare share = {});

  uint32_t count() const { return count_; }
  uint32_t features() const { return features_; }
  // Micro-batches per epoch: global ones, of ranks x batch rows.
  uint32_t steps_per_epoch() const { return count_ / (batch_ * share_.ranks); }
  bool resident() const { return resident_; }
  // Device memory the data takes: the whole set when resident, else the staging ring.
  uint64_t device_bytes() const { return device_bytes_; }
  uint64_t set_bytes() const { return set_bytes_; }  // the whole set in the storage format

  // Before submitting a step: `cursor` is the micro-batch count of the last
  // step record read (or of the state at start), and `in_flight` the steps
  // submitted since. The next step reads micro-batches below
  // cursor + (in_flight + 1) * M; stages those not staged yet.
  void stage(uint32_t cursor, uint32_t in_flight);
  // Forgets what was staged (a checkpoint moved the cursor).
  void restart() { staged_end_ = 0; }

  // Records the gathers of micro-batch `micro` of the step whose cursor is in `state`.
  void record_gather(Sequence& seq, Buffer& state, uint32_t micro);
  Buffer& batch_x() { return *batch_x_; }
  Buffer& batch_y() { return *batch_y_; }  // labels (uint32) or targets (fmt)
  // Token ids and labels come from one token stream (HostData::windows).
  bool windows() const { return stride_ != 0; }

 private:
  void check_targets(const data::HostData& train) const;
  void stage_slot(uint32_t micro_batch);

  Format fmt_;
  LossKind loss_;
  FeedLayout layout_;
  uint32_t count_, features_, batch_, micro_batches_, slots_;
  uint32_t stride_ = 0;  // windows: tokens between examples
  bool resident_ = false;
  uint64_t set_bytes_ = 0, device_bytes_ = 0;
  size_t x_row_bytes_ = 0, y_row_bytes_ = 0;
  DataShare share_;
  EpochOrder order_;
  uint32_t staged_end_ = 0;  // micro-batches below this are staged (from the current cursor on)
  // Streamed: the set, packed in the storage format, in host memory
  // (windows: host_x_ is the token stream).
  std::vector<uint8_t> host_x_, host_y_;
  // Resident: the set on the GPU (windows: the token stream in data_x_), and the ring of example ids.
  std::unique_ptr<Buffer> data_x_, data_y_, stage_ids_;
  // Streamed: the ring of rows (x, and labels or targets; windows: width + 1 tokens in stage_x_).
  std::unique_ptr<Buffer> stage_x_, stage_y_;
  std::unique_ptr<Buffer> batch_x_, batch_y_;
};

}  // namespace vkamp::train
