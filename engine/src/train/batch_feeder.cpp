#include "vkamp/train/batch_feeder.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "vkamp/gpu_abi/gather.h"
#include "vkamp/gpu_abi/gather_windows.h"
#include "vkamp/error.hpp"

namespace vkamp::train {
namespace {

using shader::GatherPush;

bool keep_on_gpu(const config::TrainConfig& cfg, const Context& ctx, uint64_t set_bytes) {
  switch (cfg.data_on_gpu) {
    case config::DataResidency::Always: return true;
    case config::DataResidency::Never: return false;
    case config::DataResidency::Auto: break;
  }
  const double budget = cfg.data_budget_mb > 0 ? cfg.data_budget_mb * (1 << 20) : ctx.info().device_local_bytes / 4.0;
  return double(set_bytes) <= budget;
}

}  // namespace

BatchFeeder::BatchFeeder(Context& ctx, const config::TrainConfig& cfg, LossKind loss, const data::HostData& train,
                         FeedLayout layout, uint32_t steps_ahead, DataShare share)
    : fmt_(cfg.precision), loss_(loss), layout_(layout), count_(train.count), features_(train.features),
      batch_(cfg.batch), micro_batches_(cfg.grad_accum),
      // Every micro-batch a step in flight or the next one may read.
      slots_((steps_ahead + 1) * cfg.grad_accum),
      stride_(train.stride), share_(share), order_(train.count, cfg.seed) {
  const bool labels = loss_ == LossKind::SoftmaxXent;
  if (windows() && (!labels || !layout_.ids || layout_.positions != features_))
    throw Error("BatchFeeder: token windows feed a model that reads ids and predicts every position");
  if (!windows() && train.x.size() != size_t(count_) * features_) throw Error("data::HostData: x has the wrong size");
  check_targets(train);
  // A row of the batch the model reads: ids (uint32) or values; labels or targets.
  const size_t batch_x_row = size_t(features_) * (layout_.ids ? 4 : format_bytes(fmt_));
  const size_t batch_y_row = labels ? size_t(layout_.positions) * 4 : size_t(layout_.outputs) * format_bytes(fmt_);
  if (windows()) {
    set_bytes_ = uint64_t(train.tokens.size()) * 4;
    x_row_bytes_ = size_t(features_ + 1) * 4;  // a staged example: its window and the next token
    y_row_bytes_ = 0;
  } else {
    x_row_bytes_ = batch_x_row;
    y_row_bytes_ = batch_y_row;
    set_bytes_ = uint64_t(count_) * (x_row_bytes_ + y_row_bytes_);
  }
  resident_ = keep_on_gpu(cfg, ctx, set_bytes_);

  // The set as the GPU reads it, converted once: staging is then a memcpy per row.
  auto bytes_of = [](const std::vector<uint32_t>& v) {
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  if (windows()) {
    host_x_ = bytes_of(train.tokens);
  } else if (layout_.ids) {
    host_x_ = bytes_of(data::token_ids(train.x));
  } else {
    host_x_ = pack(fmt_, train.x);
  }
  if (!windows()) host_y_ = labels ? bytes_of(train.labels) : pack(fmt_, train.targets);
  const size_t slot_rows = size_t(slots_) * batch_;
  if (resident_) {
    data_x_ = std::make_unique<Buffer>(ctx, host_x_.size());
    data_x_->write(host_x_.data(), host_x_.size());
    data_y_ = std::make_unique<Buffer>(ctx, std::max<size_t>(host_y_.size(), 4));
    if (!host_y_.empty()) data_y_->write(host_y_.data(), host_y_.size());
    host_x_ = {};
    host_y_ = {};
    stage_ids_ = std::make_unique<Buffer>(ctx, slot_rows * 4, Memory::Host);
    device_bytes_ = set_bytes_;
  } else {
    stage_x_ = std::make_unique<Buffer>(ctx, slot_rows * x_row_bytes_, Memory::Host);
    stage_y_ = std::make_unique<Buffer>(ctx, std::max<size_t>(slot_rows * y_row_bytes_, 4), Memory::Host);
    device_bytes_ = slot_rows * (x_row_bytes_ + y_row_bytes_);
  }
  batch_x_ = std::make_unique<Buffer>(ctx, size_t(batch_) * batch_x_row);
  batch_y_ = std::make_unique<Buffer>(ctx, size_t(batch_) * batch_y_row);
}

void BatchFeeder::check_targets(const data::HostData& train) const {
  const uint32_t outputs = layout_.outputs;
  if (loss_ == LossKind::SoftmaxXent) {
    const std::vector<uint32_t>& labels = windows() ? train.tokens : train.labels;
    if (!windows() && labels.size() != size_t(count_) * layout_.positions)
      throw Error("data::HostData: labels have the wrong size");
    for (uint32_t l : labels) {
      if (!windows() && (l & data::kNotTarget)) continue;  // no target: its value is never read
      const uint32_t id = l & ~data::kNotTarget;           // a stream's token is an input, target or not
      if (id >= layout_.classes)
        throw ConfigError("a label (" + std::to_string(id) + ") is not below the model's " +
                          std::to_string(layout_.classes) + " classes");
    }
  } else if (train.targets.size() != size_t(count_) * outputs) {
    throw ConfigError("the data has " + std::to_string(train.targets.size() / std::max(count_, 1u)) +
                      " targets per example but the model has " + std::to_string(outputs) + " outputs");
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
  if (windows()) {  // each example's window and next token, from the stream
    for (uint32_t r = 0; r < batch_; ++r)
      stage_x_->write(host_x_.data() + size_t(ids[r]) * stride_ * 4, x_row_bytes_, (first_row + r) * x_row_bytes_);
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
  auto groups = [](uint64_t n) { return std::min<uint32_t>(uint32_t(div_up(n, 256)), 65535u); };
  if (windows()) {
    const shader::GatherWindowsPush push{B, features_, slots_, micro, stride_};
    auto k = ctx.kernel<shader::GatherWindowsShader>({staged_rows});
    seq.dispatch(k, {state, ids, src_x, *batch_x_, *batch_y_}, push, {groups(uint64_t(B) * features_)},
                 "gather_windows");
    return;
  }
  // uint32 rows (labels, token ids) are copied by gather_labels; values in
  // the storage format by gather.
  auto gather = ctx.kernel<shader::GatherShader>(fmt_, {staged_rows});
  auto gather_u32 = ctx.kernel<shader::GatherLabelsShader>({staged_rows});
  GatherPush gx{B, features_, slots_, micro};
  seq.dispatch(layout_.ids ? gather_u32 : gather, {state, ids, src_x, *batch_x_}, gx,
               {groups(uint64_t(B) * features_)}, "gather");
  const bool labels = loss_ == LossKind::SoftmaxXent;
  GatherPush gy{B, labels ? layout_.positions : layout_.outputs, slots_, micro};
  seq.dispatch(labels ? gather_u32 : gather, {state, ids, src_y, *batch_y_}, gy, {groups(uint64_t(B) * gy.width)},
               labels ? "gather_labels" : "gather");
}

}  // namespace vkamp::train
