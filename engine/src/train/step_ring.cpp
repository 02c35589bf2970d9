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
  for (auto& slot : segments_)
    for (auto& g : slot) g.seq->poll();
}

void StepRing::record_slots(const std::function<void(Sequence&)>& record_step) {
  for (auto& s : slots_) record_step(*s);
}

void StepRing::record_split_slots(const std::function<void(Sequence&)>& record_a,
                                  const std::function<void(Sequence&)>& record_b) {
  Context& ctx = slots_.front()->context();
  slots_b_.clear();  // recorded again: Trainer::record_step
  segments_.clear();
  segments_.resize(slots_.size());
  for (auto& s : slots_) {
    recording_slot_ = int(&s - slots_.data());
    record_a(*s);
    recording_slot_ = -1;
    slots_b_.push_back(std::make_unique<Sequence>(ctx, /*timestamps=*/true, 64));
    record_b(*slots_b_.back());
  }
}

Sequence& StepRing::cut(Sequence& ending, std::function<void()> before) {
  if (recording_slot_ < 0) throw Error("StepRing: cut() outside the recording of a split step's part A");
  ending.end();
  auto& segments = segments_[size_t(recording_slot_)];
  segments.push_back({std::move(before), std::make_unique<Sequence>(ending.context(), /*timestamps=*/true, 1024)});
  Sequence& next = *segments.back().seq;
  next.begin();
  return next;
}

CommandCounts StepRing::commands_per_step() const {
  CommandCounts c = slots_.front()->counts();
  if (split()) {
    for (auto& g : segments_.front()) c += g.seq->counts();
    c += slots_b_.front()->counts();
  }
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
    for (auto& g : segments_[replay % kInFlight]) {
      std::vector<DispatchTime> t = g.seq->timings();
      timings.insert(timings.end(), t.begin(), t.end());
    }
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
    // Each segment and part B start with a barrier that orders them after
    // the previous one (sequence.hpp), and the host's writes before
    // vkQueueSubmit are visible to them.
    Sequence* last = &a;
    for (auto& g : segments_[submitted_ % kInFlight]) {
      last->wait();
      g.before();
      g.seq->submit();
      last = g.seq.get();
    }
    last->wait();
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
