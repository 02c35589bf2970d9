// The training loop. A whole step (gather, forward, loss x scale, backward,
// fault injection, AMP pass, step control, optimizer) is recorded once per
// in-flight slot and replayed; every decision is made on the GPU, and the
// host reads each step's record a few steps later from a host-visible ring.
#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/sequence.hpp"
#include "vkamp/train/config.hpp"
#include "vkamp/train/dataset.hpp"
#include "vkamp/train/gpu_state.hpp"
#include "vkamp/train/model.hpp"

namespace vkamp::train {

enum class LossKind { SoftmaxXent, MSE };

// A dataset in host memory, handed to the trainer, which keeps it on the GPU.
struct HostData {
  uint32_t count = 0, features = 0;
  std::vector<float> x;            // count x features
  std::vector<uint32_t> labels;    // SoftmaxXent: count
  std::vector<float> targets;      // MSE: count x model outputs

  static HostData classification(const ClassificationData& d) { return {d.count, d.features, d.x, d.y, {}}; }
};

struct StepMetrics {
  uint32_t step = 0;
  float loss = 0, loss_scale = 0;
  bool skipped = false, overflow = false;
  float grad_norm = 0, lr = 0;
  uint32_t retries = 0;
  double step_time_ms = 0;  // GPU time of the step (timestamps), 0 if unknown
  uint32_t applied = 0, cursor = 0;
};

struct TensorHistogram {
  uint32_t step = 0;
  std::string tensor;
  float loss_scale = 0;
  std::array<uint32_t, kHistBins> bins{};
};

struct TrainSummary {
  uint32_t steps = 0;     // attempted (records seen)
  uint32_t applied = 0, skipped = 0, overflows = 0;
  float final_scale = 0, last_loss = 0;
  bool failed = false;
  std::string failure;
  double seconds = 0;
  double samples_per_second = 0;  // applied updates x batch x micro-batches / s
  uint64_t host_waits_in_loop = 0;  // blocking reads while stepping (must stay 0)
  uint64_t pacing_waits = 0;
  double gpu_ms_per_step = 0;       // mean over records with a time
  double amp_ms_per_step = 0;       // inject + amp_check + step_control
  // GPU ms per step by kernel label, summed over the layers, largest first.
  std::vector<std::pair<std::string, double>> kernel_ms_per_step;
};

class Trainer {
 public:
  Trainer(Context& ctx, const TrainConfig& cfg, const ModelSpec& spec, LossKind loss,
          const HostData& train);
  // Any graph (graph/graph.hpp) as the model.
  Trainer(Context& ctx, const TrainConfig& cfg, graph::Graph model, LossKind loss, const HostData& train);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Called on the host thread for every step record, in step order.
  std::function<void(const StepMetrics&)> on_step;
  std::function<void(const TensorHistogram&)> on_histogram;

  // Trains until the update budget (epochs) is spent or fail-fast trips.
  // Checkpoints as configured. Resumes first when cfg.resume is set.
  // run() is start(), advance() until it returns false, then finish().
  TrainSummary run();
  void start();
  // Submits one more step and reads the records that are ready; false once
  // the run is over (budget spent, fail-fast, or every step overflowing).
  bool advance();
  TrainSummary finish();
  // Waits for the submitted steps and reads their records (a pause, a
  // single step in the app).
  void sync() { flush(); }

  // Live controls (the app). Each waits for the steps in flight first.
  // New dynamic-scaling knobs, validated like the config; the current
  // scale is clamped into [min, max]. Throws ConfigError.
  void set_scaler(const ScalerConfig& sc);
  // Writes an inf into a gradient at the next step, as --inject-overflow.
  void inject_overflow_next();
  const TrainConfig& config() const { return cfg_; }

  // Accuracy (SoftmaxXent) or mean squared error (MSE) over a dataset.
  double evaluate(const HostData& data);

  uint32_t budget() const { return budget_; }
  uint32_t steps_per_epoch() const { return steps_per_epoch_; }
  Model& model() { return *model_; }
  // Blocking reads of the GPU state (waits for all submitted work).
  TrainState read_state();
  void save_checkpoint(const std::string& path);
  void load_checkpoint(const std::string& path);

 private:
  // spec: the model string's spec when there is one (checkpoints, exports).
  Trainer(Context& ctx, const TrainConfig& cfg, graph::Graph model, const ModelSpec* spec, LossKind loss,
          const HostData& train);
  void record_step(Sequence& seq);
  void submit_next();
  void drain_completed(bool block_all);
  void read_record(uint32_t replay, size_t slot);
  void publish_histograms(const StepRecord& r);
  void flush() { drain_completed(true); }
  std::string nonfinite_master_text(const TrainState& st) const;

  Context& ctx_;
  TrainConfig cfg_;
  LossKind loss_kind_;
  Format fmt_;
  uint32_t count_ = 0, features_ = 0;
  uint32_t steps_per_epoch_ = 0, budget_ = 0, max_attempts_ = 0, epochs_stored_ = 0;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Buffer> data_x_, data_y_, perm_, batch_x_, batch_y_;
  std::unique_ptr<Buffer> state_, params_, partial_sq_, partial_bad_, loss_, row_loss_, reduce_scratch_;
  std::unique_ptr<Buffer> hist_, hist_ring_, ring_, tensor_ranges_, inject_mask_;
  std::unique_ptr<Buffer> bias_correction_;  // Adam: (1 - beta1^t, 1 - beta2^t) per t, from the host
  std::unique_ptr<Buffer> grad_sum_;  // fp32 sum of the micro-batch gradients (grad_accum > 1)
  uint32_t partials_ = 0;
  std::vector<std::unique_ptr<Sequence>> slots_;
  uint32_t submitted_ = 0, drained_ = 0;  // absolute step numbers
  bool stop_seen_ = false, failed_seen_ = false;
  TrainSummary summary_;
  double gpu_ms_sum_ = 0, amp_ms_sum_ = 0;
  std::chrono::steady_clock::time_point t0_;
  uint32_t last_checkpoint_ = 0;
  uint64_t waits0_ = 0, pacing0_ = 0, checkpoint_waits_ = 0;
  std::vector<uint32_t> inject_bits_;  // host copy of inject_mask_
  std::map<std::string, double> kernel_ms_sum_;
  uint32_t timed_steps_ = 0;
};

inline constexpr uint32_t kRingSize = 64;      // step records
inline constexpr uint32_t kHistRingSize = 4;   // histogram slots
inline constexpr uint32_t kInFlight = 3;       // steps the host may run ahead

}  // namespace vkamp::train
