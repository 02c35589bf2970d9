#include "vkamp/train/step_ring.hpp"

#include <algorithm>
#include <bit>

#include "vkamp/error.hpp"

namespace vkamp::train {

StepMetrics step_metrics(const StepRecord& r) {
  StepMetrics m;
  m.step = r.step;
  m.loss = r.loss;
  m.loss_scale = r.loss_scale;
  m.skipped = r.skipped != 0;
  m.overflow = r.overflow != 0;
  m.grad_norm = r.grad_norm;
  m.lr = r.lr;
  m.retries = r.retries;
  m.applied = r.applied;
  m.cursor = r.cursor;
  m.zeros = r.zeros;
  m.subnormal = r.subnormal;
  m.lost_unscaled = r.lost_unscaled;
  m.max_abs_grad = std::bit_cast<float>(r.max_abs_bits);
  return m;
}

StepRing::StepRing(Context& ctx, std::vector<std::string> tensor_names) : tensor_names_(std::move(tensor_names)) {
  const size_t hist_words = tensor_names_.size() * kHistBins;
  hist_ring_ = std::make_unique<Buffer>(ctx, kHistRingSize * hist_words * 4, Memory::Host);
  hist_ring_->fill(0);
  stats_ring_ = std::make_unique<Buffer>(ctx, std::max<size_t>(1, kRingSize * tensor_names_.size()) * sizeof(TensorStats),
                                         Memory::Host);
  stats_ring_->fill(0);
  ring_ = std::make_unique<Buffer>(ctx, kRingSize * sizeof(StepRecord), Memory::Host);
  ring_->fill(0xFFFFFFFFu);
  for (uint32_t i = 0; i < kInFlight; ++i) slots_.push_back(std::make_unique<Sequence>(ctx, /*timestamps=*/true, 1024));
}

StepRing::~StepRing() {
  for (auto& s : slots_) s->poll();  // Sequence's destructor waits for the rest
  for (auto& s : slots_b_) s->poll();
}

void StepRing::record_slots(const std::function<void(Sequence&)>& record_step) {
  for (auto& s : slots_) record_step(*s);
}

void StepRing::record_split_slots(const std::function<void(Sequence&)>& record_a,
                                  const std::function<void(Sequence&)>& record_b) {
  Context& ctx = slots_.front()->context();
  for (auto& s : slots_) {
    record_a(*s);
    slots_b_.push_back(std::make_unique<Sequence>(ctx, /*timestamps=*/true, 64));
    record_b(*slots_b_.back());
  }
}

CommandCounts StepRing::commands_per_step() const {
  CommandCounts c = slots_.front()->counts();
  if (split()) c += slots_b_.front()->counts();
  return c;
}

void StepRing::read_next() {
  const uint32_t replay = drained_;
  StepRecord r;
  ring_->read(&r, sizeof(r), size_t(replay % kRingSize) * sizeof(r));
  if (r.replay != replay)
    throw Error("metrics ring out of step: expected replay " + std::to_string(replay) + ", found " +
                std::to_string(r.replay));
  ++drained_;
  if (!on_record) return;
  std::vector<DispatchTime> timings = slots_[replay % kInFlight]->timings();
  if (split()) {
    std::vector<DispatchTime> b = slots_b_[replay % kInFlight]->timings();
    timings.insert(timings.end(), b.begin(), b.end());
  }
  on_record(r, timings);
}

void StepRing::drain(bool block_all) {
  while (drained_ < submitted_) {
    Sequence& s = split() ? *slots_b_[drained_ % kInFlight] : *slots_[drained_ % kInFlight];
    if (!s.poll()) {
      if (!block_all) return;
      s.wait();
    }
    read_next();
  }
}

void StepRing::make_room() {
  // Before reusing the slot, its previous step must be read: pace on it.
  while (drained_ + kInFlight <= submitted_) {
    Sequence& oldest = split() ? *slots_b_[drained_ % kInFlight] : *slots_[drained_ % kInFlight];
    if (!oldest.poll()) oldest.wait_for_reuse();
    read_next();
  }
}

void StepRing::submit_next() {
  make_room();
  Sequence& a = *slots_[submitted_ % kInFlight];
  a.submit();
  if (split()) {
    // Part B starts with a barrier that orders it after A (sequence.hpp),
    // and the host's writes before vkQueueSubmit are visible to it.
    a.wait();
    if (between) between();
    slots_b_[submitted_ % kInFlight]->submit();
  }
  ++submitted_;
  if (split()) drain(true);  // lockstep: see the class comment
}

std::vector<TensorHistogram> StepRing::histograms_of(const StepRecord& r) {
  std::vector<uint32_t> words(tensor_names_.size() * kHistBins);
  hist_ring_->read(words.data(), words.size() * 4, size_t(r.hist_slot) * words.size() * 4);
  std::vector<TensorHistogram> out(tensor_names_.size());
  for (size_t t = 0; t < out.size(); ++t) {
    out[t].step = r.step;
    out[t].tensor = tensor_names_[t];
    out[t].loss_scale = r.loss_scale;
    std::copy_n(words.begin() + t * kHistBins, kHistBins, out[t].bins.begin());
  }
  return out;
}

std::vector<TensorStats> StepRing::tensor_stats_of(const StepRecord& r) {
  std::vector<TensorStats> out(tensor_names_.size());
  const size_t bytes = out.size() * sizeof(TensorStats);
  stats_ring_->read(out.data(), bytes, size_t(r.replay % kRingSize) * bytes);
  return out;
}

}  // namespace vkamp::train
