// The step-record ring: the host-visible ring of StepRecords and histogram
// slots that step_control writes, and the in-flight command slots that
// replay the recorded step. The host submits up to kInFlight steps ahead
// and reads each record once its slot has completed, without waiting,
// except to reuse a slot (pacing) or when asked to drain.
//
// Split (data-parallel runs, world > 1): each slot holds the step in two
// command buffers, part A (the micro-batches) and part B (the decision and
// the update). submit_next() submits A, waits for it, calls `between` (the
// host all-reduces the gradients there), submits B and waits for it too, so
// that every rank reads the same records after the same step and takes the
// same stop decision: one rank running ahead would wait forever in an
// all-reduce the others never join.
//
// Segmented (--sync-bn under MPI, split mode only): part A may be cut into
// further command buffers while it is recorded (cut()), each with a host
// call before it (BatchNorm's statistics merged across the ranks). The
// host submits a segment, waits for it, makes the next one's call and
// submits that, and so on to part B: it waits at every cut, inherent to a
// host-side all-reduce. Runs without cuts record and submit as before.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/sequence.hpp"
#include "vkamp/train/step_metrics.hpp"

namespace vkamp::train {

inline constexpr uint32_t kRingSize = 64;      // step records
inline constexpr uint32_t kHistRingSize = 4;   // histogram slots
inline constexpr uint32_t kInFlight = 3;       // steps the host may run ahead

class StepRing {
 public:
  StepRing(Context& ctx, std::vector<std::string> tensor_names);
  ~StepRing();
  StepRing(const StepRing&) = delete;
  StepRing& operator=(const StepRing&) = delete;

  Buffer& records() { return *ring_; }
  Buffer& histograms() { return *hist_ring_; }
  Buffer& tensor_stats() { return *stats_ring_; }
  // Records the step into every in-flight slot.
  void record_slots(const std::function<void(Sequence&)>& record_step);
  // Records part A and part B of the step into every in-flight slot: the
  // split mode above.
  void record_split_slots(const std::function<void(Sequence&)>& record_a,
                          const std::function<void(Sequence&)>& record_b);
  bool split() const { return !slots_b_.empty(); }
  // While record_split_slots records part A of a slot: ends `ending` (the
  // part or segment being recorded) and returns the slot's next segment,
  // begun, which `before` prepares on the host once `ending` has completed.
  Sequence& cut(Sequence& ending, std::function<void()> before);
  // What one step's recording holds (both parts when split); every slot
  // holds the same.
  CommandCounts commands_per_step() const;
  // Split mode: called between part A's completion and part B's submission.
  std::function<void()> between;

  // Called for every record read, in step order, with the per-dispatch GPU
  // times of the step (both parts when split).
  std::function<void(const StepRecord&, const std::vector<DispatchTime>& timings)> on_record;

  // Before the next step: reads the record of the slot it will reuse,
  // waiting for that step when it has not completed (pacing).
  void make_room();
  // Submits the next step (make_room() first).
  void submit_next();
  // Reads the records of the completed steps; with block_all, waits for all.
  void drain(bool block_all);
  uint32_t submitted() const { return submitted_; }
  uint32_t in_flight() const { return submitted_ - drained_; }
  // Replays count from 0 again (TrainState.replay was reset).
  void restart() { submitted_ = drained_ = 0; }

  // The histograms record `r` points to, one per tensor.
  std::vector<TensorHistogram> histograms_of(const StepRecord& r);
  // The underflow accounting of record `r`'s step, one per tensor (read
  // before kRingSize more steps complete: on_record is the place).
  std::vector<TensorStats> tensor_stats_of(const StepRecord& r);

 private:
  void read_next();

  std::vector<std::string> tensor_names_;
  std::unique_ptr<Buffer> ring_, hist_ring_, stats_ring_;
  std::vector<std::unique_ptr<Sequence>> slots_, slots_b_;  // slots_b_: part B, split mode only
  // Per slot, part A's segments after the first (cut()), in order.
  struct Segment {
    std::function<void()> before;
    std::unique_ptr<Sequence> seq;
  };
  std::vector<std::vector<Segment>> segments_;
  int recording_slot_ = -1;  // the slot record_split_slots is recording part A of
  uint32_t submitted_ = 0, drained_ = 0;  // replay numbers
};

}  // namespace vkamp::train
