#include "vkamp/train/batch_feeder.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "vkamp/error.hpp"

namespace vkamp::train {
namespace {

struct GatherPush {
  uint32_t rows, width, slots, micro;
};

bool keep_on_gpu(const TrainConfig& cfg, const Context& ctx, uint64_t set_bytes) {
  switch (cfg.data_on_gpu) {
    case DataResidency::Always: return true;
    case DataResidency::Never: return false;
    case DataResidency::Auto: break;
  }
  const double budget = cfg.data_budget_mb > 0 ? cfg.data_budget_mb * (1 << 20) : ctx.info().device_local_bytes / 4.0;
  return double(set_bytes) <= budget;
}

}  // namespace

BatchFeeder::BatchFeeder(Context& ctx, const TrainConfig& cfg, LossKind loss, const HostData& train,
                         uint32_t outputs, uint32_t steps_ahead, DataShare share)
    : fmt_(cfg.precision), loss_(loss), count_(train.count), features_(train.features), outputs_(outputs),
      batch_(cfg.batch), micro_batches_(cfg.grad_accum),
      // Every micro-batch a step in flight or the next one may read.
      slots_((steps_ahead + 1) * cfg.grad_accum),
      share_(share), order_(train.count, cfg.seed) {
  if (train.x.size() != size_t(count_) * features_) throw Error("HostData: x has the wrong size");
  check_targets(train);
  const bool labels = loss_ == LossKind::SoftmaxXent;
  x_row_bytes_ = size_t(features_) * format_bytes(fmt_);
  y_row_bytes_ = labels ? 4 : size_t(outputs_) * format_bytes(fmt_);
  set_bytes_ = uint64_t(count_) * (x_row_bytes_ + y_row_bytes_);
  resident_ = keep_on_gpu(cfg, ctx, set_bytes_);

  // The set in the storage format, converted once: staging is then a memcpy per row.
  host_x_ = pack(fmt_, train.x);
  if (labels) {
    host_y_.resize(size_t(count_) * 4);
    std::memcpy(host_y_.data(), train.labels.data(), host_y_.size());
  } else {
    host_y_ = pack(fmt_, train.targets);
  }
  const size_t slot_rows = size_t(slots_) * batch_;
  if (resident_) {
    data_x_ = std::make_unique<Buffer>(ctx, host_x_.size());
    data_x_->write(host_x_.data(), host_x_.size());
    data_y_ = std::make_unique<Buffer>(ctx, host_y_.size());
    data_y_->write(host_y_.data(), host_y_.size());
    host_x_ = {};
    host_y_ = {};
    stage_ids_ = std::make_unique<Buffer>(ctx, slot_rows * 4, Memory::Host);
    device_bytes_ = set_bytes_;
  } else {
    stage_x_ = std::make_unique<Buffer>(ctx, slot_rows * x_row_bytes_, Memory::Host);
    stage_y_ = std::make_unique<Buffer>(ctx, slot_rows * y_row_bytes_, Memory::Host);
    device_bytes_ = slot_rows * (x_row_bytes_ + y_row_bytes_);
  }
  batch_x_ = std::make_unique<Buffer>(ctx, size_t(batch_) * x_row_bytes_);
  batch_y_ = std::make_unique<Buffer>(ctx, size_t(batch_) * y_row_bytes_);
}

void BatchFeeder::check_targets(const HostData& train) const {
  if (loss_ == LossKind::SoftmaxXent) {
    if (train.labels.size() != count_) throw Error("HostData: labels have the wrong size");
    for (uint32_t l : train.labels)
      if (l >= outputs_)
        throw ConfigError("a label (" + std::to_string(l) + ") is not below the model's " +
                          std::to_string(outputs_) + " outputs");
  } else if (train.targets.size() != size_t(count_) * outputs_) {
    throw ConfigError("the data has " + std::to_string(train.targets.size() / std::max(count_, 1u)) +
                      " targets per example but the model has " + std::to_string(outputs_) + " outputs");
  }
}

// Steps in flight read micro-batches from `cursor` on (the cursor never goes
// back), so the slot of micro-batch b - slots, which b overwrites, is no
// longer read by any of them when b < cursor + slots.
void BatchFeeder::stage(uint32_t cursor, uint32_t in_flight) {
  const uint32_t end = cursor + (in_flight + 1) * micro_batches_;
  if (end - cursor > slots_) throw Error("BatchFeeder: more steps in flight than staging slots");
  for (uint32_t b = std::max(staged_end_, cursor); b < end; ++b) stage_slot(b);
  staged_end_ = std::max(staged_end_, end);
}

void BatchFeeder::stage_slot(uint32_t micro_batch) {
  const uint32_t per_epoch = steps_per_epoch();
  const std::vector<uint32_t>& order = order_.of(micro_batch / per_epoch);
  // Every rank walks the same epoch order; its rows are its share of the
  // global micro-batch (DataShare), so N ranks at batch B see the rows one
  // process at batch N x B would.
  const uint32_t* ids =
      order.data() + size_t(micro_batch % per_epoch) * batch_ * share_.ranks + size_t(share_.rank) * batch_;
  const size_t first_row = size_t(micro_batch % slots_) * batch_;
  if (resident_) {
    stage_ids_->write(ids, size_t(batch_) * 4, first_row * 4);
    return;
  }
  // Row by row into the mapped ring: a memcpy each, no GPU wait.
  for (uint32_t r = 0; r < batch_; ++r) {
    stage_x_->write(host_x_.data() + size_t(ids[r]) * x_row_bytes_, x_row_bytes_, (first_row + r) * x_row_bytes_);
    stage_y_->write(host_y_.data() + size_t(ids[r]) * y_row_bytes_, y_row_bytes_, (first_row + r) * y_row_bytes_);
  }
}

void BatchFeeder::record_gather(Sequence& seq, Buffer& state, uint32_t micro) {
  Context& ctx = seq.context();
  const uint32_t B = batch_;
  const uint32_t staged_rows = resident_ ? 0 : 1;     // STAGED_ROWS: the source is the ring itself
  Buffer& ids = resident_ ? *stage_ids_ : *stage_x_;  // unread when the rows are staged
  Buffer& src_x = resident_ ? *data_x_ : *stage_x_;
  Buffer& src_y = resident_ ? *data_y_ : *stage_y_;
  GatherPush gx{B, features_, slots_, micro};
  Kernel& gather = ctx.kernel({"gather." + ctx.variant(fmt_), 4, sizeof(GatherPush), {staged_rows}});
  seq.dispatch(gather, {state, ids, src_x, *batch_x_}, gx, {std::min(div_up(B * features_, 256), 65535u)},
               "gather");
  if (loss_ == LossKind::SoftmaxXent) {
    Kernel& gl = ctx.kernel({"gather_labels", 4, sizeof(GatherPush), {staged_rows}});
    seq.dispatch(gl, {state, ids, src_y, *batch_y_}, gx, {div_up(B, 64)}, "gather_labels");
  } else {
    GatherPush gy{B, outputs_, slots_, micro};
    seq.dispatch(gather, {state, ids, src_y, *batch_y_}, gy, {std::min(div_up(B * outputs_, 256), 65535u)},
                 "gather");
  }
}

}  // namespace vkamp::train
