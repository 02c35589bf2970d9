#include "vkamp/train/batch_feeder.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "vkamp/error.hpp"
#include "vkamp/train/config.hpp"

namespace vkamp::train {
namespace {

struct GatherPush {
  uint32_t rows, width, count, steps_per_epoch, epochs_stored, micro;
};

}  // namespace

BatchFeeder::BatchFeeder(Context& ctx, Format fmt, LossKind loss, const HostData& train, uint32_t outputs,
                         uint32_t batch, uint32_t epochs, uint64_t seed)
    : fmt_(fmt), loss_(loss), count_(train.count), features_(train.features), outputs_(outputs), batch_(batch),
      // Permutations for every epoch of the run (and two spare for a
      // resumed, longer one) up to 64; the gather wraps around past those.
      epochs_stored_(std::min<uint32_t>(epochs + 2, 64)) {
  if (train.x.size() != size_t(count_) * features_) throw Error("HostData: x has the wrong size");
  auto xb = pack(fmt_, train.x);
  data_x_ = std::make_unique<Buffer>(ctx, xb.size());
  data_x_->write(xb.data(), xb.size());
  batch_x_ = std::make_unique<Buffer>(ctx, size_t(batch_) * features_ * format_bytes(fmt_));
  upload_targets(ctx, train);
  upload_permutations(ctx, seed);
}

void BatchFeeder::upload_targets(Context& ctx, const HostData& train) {
  if (loss_ == LossKind::SoftmaxXent) {
    if (train.labels.size() != count_) throw Error("HostData: labels have the wrong size");
    for (uint32_t l : train.labels)
      if (l >= outputs_)
        throw ConfigError("a label (" + std::to_string(l) + ") is not below the model's " +
                          std::to_string(outputs_) + " outputs");
    data_y_ = std::make_unique<Buffer>(ctx, size_t(count_) * 4);
    data_y_->write(train.labels);
    batch_y_ = std::make_unique<Buffer>(ctx, size_t(batch_) * 4);
    return;
  }
  if (train.targets.size() != size_t(count_) * outputs_) throw Error("HostData: targets have the wrong size");
  auto yb = pack(fmt_, train.targets);
  data_y_ = std::make_unique<Buffer>(ctx, yb.size());
  data_y_->write(yb.data(), yb.size());
  batch_y_ = std::make_unique<Buffer>(ctx, size_t(batch_) * outputs_ * format_bytes(fmt_));
}

// One seeded permutation per epoch, all uploaded up front.
void BatchFeeder::upload_permutations(Context& ctx, uint64_t seed) {
  std::vector<uint32_t> perm(size_t(epochs_stored_) * count_);
  for (uint32_t e = 0; e < epochs_stored_; ++e) {
    auto first = perm.begin() + size_t(e) * count_;
    std::iota(first, first + count_, 0u);
    std::mt19937_64 gen(seed * 0x9E3779B97F4A7C15ull + e + 1);
    std::shuffle(first, first + count_, gen);
  }
  perm_ = std::make_unique<Buffer>(ctx, perm.size() * 4);
  perm_->write(perm);
}

void BatchFeeder::record_gather(Sequence& seq, Buffer& state, uint32_t micro) {
  Context& ctx = seq.context();
  const uint32_t B = batch_;
  GatherPush gx{B, features_, count_, steps_per_epoch(), epochs_stored_, micro};
  Kernel& gather = ctx.kernel({"gather." + ctx.variant(fmt_), 4, sizeof(GatherPush), {}});
  seq.dispatch(gather, {state, *perm_, *data_x_, *batch_x_}, gx, {std::min(div_up(B * features_, 256), 65535u)},
               "gather");
  if (loss_ == LossKind::SoftmaxXent) {
    Kernel& gl = ctx.kernel({"gather_labels", 4, sizeof(GatherPush), {}});
    seq.dispatch(gl, {state, *perm_, *data_y_, *batch_y_}, gx, {div_up(B, 64)}, "gather_labels");
  } else {
    GatherPush gy{B, outputs_, count_, steps_per_epoch(), epochs_stored_, micro};
    seq.dispatch(gather, {state, *perm_, *data_y_, *batch_y_}, gy, {std::min(div_up(B * outputs_, 256), 65535u)},
                 "gather");
  }
}

}  // namespace vkamp::train
