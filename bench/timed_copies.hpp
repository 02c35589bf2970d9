// R recorded copies of a case, replayed and timed with GPU timestamps
// (what `vkamp-bench reduce` and `attention` share). A case is a list of
// parts, each recording one or more dispatches; a copy records every part
// once. A one-copy probe run builds the pipelines and sizes R to about
// 50 ms of GPU time (at most 64 copies, and at most the sequence's 512
// timed dispatches), then a warm-up run of the R copies. Each timed run
// adds, per copy, each part's summed dispatch time.
#pragma once
#include <algorithm>
#include <functional>
#include <stdexcept>
#include <vector>

#include "bench_util.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::bench {

class TimedCopies {
 public:
  using Part = std::function<void(Sequence&)>;
  static constexpr double kTargetRunMs = 50;
  static constexpr uint32_t kMaxCopies = 64, kMaxDispatches = 512;

  TimedCopies(Context& ctx, std::vector<Part> parts)
      : parts_(std::move(parts)), seq_(ctx, true, kMaxDispatches), times_(parts_.size()) {
    record(1);
    std::vector<std::vector<double>> probe(parts_.size());
    run(probe);
    double ms = 0;
    for (const auto& t : probe) ms += t.at(0);
    const uint32_t per_copy = std::max<uint32_t>(1, seq_.dispatch_count());
    if (per_copy > kMaxDispatches) throw std::runtime_error("a case records more dispatches than the 512 timed");
    copies_ = uint32_t(std::clamp(kTargetRunMs / std::max(ms, 1e-6), 1.0, double(kMaxCopies)));
    copies_ = std::max<uint32_t>(1, std::min(copies_, kMaxDispatches / per_copy));
    record(copies_);
    run(probe);  // the warm-up run of this recording
  }

  void timed_run() { run(times_); }
  double median_ms(size_t part) const { return median(times_.at(part)); }
  uint32_t copies() const { return copies_; }

 private:
  void record(uint32_t copies) {
    seq_.begin();
    dispatches_.clear();
    for (uint32_t c = 0; c < copies; ++c)
      for (const Part& part : parts_) {
        const uint32_t before = seq_.dispatch_count();
        part(seq_);
        if (c == 0) dispatches_.push_back(seq_.dispatch_count() - before);
      }
    seq_.end();
  }
  void run(std::vector<std::vector<double>>& out) {
    seq_.run();
    const std::vector<DispatchTime> t = seq_.timings();
    if (t.empty()) throw std::runtime_error("no GPU timestamps on this device");
    size_t i = 0;
    while (i < t.size())
      for (size_t p = 0; p < parts_.size(); ++p) {
        double ms = 0;
        for (uint32_t d = 0; d < dispatches_[p] && i < t.size(); ++d) ms += t[i++].ms;
        out[p].push_back(ms);
      }
  }

  std::vector<Part> parts_;
  Sequence seq_;
  std::vector<std::vector<double>> times_;
  std::vector<uint32_t> dispatches_;  // per part, in one copy
  uint32_t copies_ = 1;
};

}  // namespace vkamp::bench
