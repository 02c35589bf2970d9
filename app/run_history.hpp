// What the dashboard draws: the history of one training run, built from
// the trainer's step records and histograms. The trainer's thread appends
// to a SharedHistory; the UI thread pulls what is new into its own copy
// once per frame, so drawing never holds the lock and never waits on the GPU.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "app/bn_statistics.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/train/trainer.hpp"
#include "vkamp/train/underflow_scope.hpp"

namespace vkamp::app {

enum class ScaleChange : uint8_t { Backoff, Growth };

struct ScaleEvent {
  uint32_t step;
  ScaleChange kind;
  float from, to;
};

struct EvalPoint {
  uint32_t step;     // optimizer steps attempted when it was measured
  double accuracy;   // in [0, 1] (classification) or the MSE (regression)
  uint32_t epoch = 0;  // the epoch it ended, from 1; 0 when taken on demand (the app)
  std::string metric = "accuracy";  // or "mse", as the --metrics eval records name it
};

// The underflow accounting as the dashboard plots it: in % of the
// elements (of every gradient, or of one tensor), and the headroom in
// doublings of the scale (NaN where there was none: no nonzero gradient).
struct UnderflowSeries {
  std::vector<float> step, lost_unscaled, subnormal, zeros, headroom;
  void add(uint32_t at, const train::UnderflowShares& u);
};

struct RunHistory {
  std::string title;        // "fashion_mlp · fp16, dynamic loss scale"
  std::string eval_name;     // the evaluations' series ("val loss"); empty: eval_label() names it
  uint32_t samples_per_step = 0;  // batch x micro-batches, for throughput
  uint32_t budget = 0;            // optimizer updates the run will apply
  uint32_t histogram_interval = 0;  // steps between histograms (0 = none)
  Format precision = Format::F16;   // the gradients' format: the histogram shows its ranges
  // What the underflow counts are shares of (the same precision, and the
  // tensors); empty: the run's underflow is not plotted.
  train::UnderflowScope gradients;

  // One entry per step record, in step order.
  std::vector<float> step, loss, loss_smooth, loss_scale, grad_norm, step_ms;
  std::vector<uint8_t> skipped;
  std::vector<uint32_t> skipped_steps;  // the steps whose update was skipped
  std::vector<ScaleEvent> events;       // scale backoffs and growths
  std::vector<EvalPoint> evals;
  uint32_t applied = 0, overflows = 0;
  // The newest exponent histogram of each parameter tensor.
  std::vector<train::TensorHistogram> histograms;
  // The underflow accounting of every step, over all the gradients; and
  // per tensor (in gradients.tensors order) at the steps that take
  // histograms (train::per_tensor_step).
  UnderflowSeries underflow;
  std::vector<UnderflowSeries> tensor_underflow;
  // Everything as received, for exporting the metrics as JSON Lines.
  std::vector<train::StepMetrics> raw_steps;
  std::vector<train::TensorHistogram> raw_histograms;
  std::vector<train::TensorUnderflow> raw_underflow;
  // BatchNorm's running statistics at step bn_step (the newest host read);
  // empty for a model without BatchNorm, and then no panel shows them.
  std::vector<BnLayerStats> bn_layers;
  uint32_t bn_step = 0;
  std::string status;  // "training", "paused", "finished", an error...
  std::string generated_text;  // a language model's sample, written when its run ends
  std::string training_sample;  // a fine-tune's rendered conversation, its targets marked (Datasets::sample)

  size_t records() const { return step.size(); }
  uint32_t backoffs() const;
  uint32_t growths() const;

  void add(const train::StepMetrics& m);
  void add(const train::TensorHistogram& h);
  // A per-tensor step's accounting (the caller picks the steps).
  void add(const train::TensorUnderflow& u);
  // Writes the run as --metrics does (throws vkamp::Error).
  void export_jsonl(const std::string& path) const;
};

// The name the dashboard gives the evaluations: h.eval_name, or else the
// metric's ("test accuracy", "test mse"), so that a regression's panel is
// not titled as an accuracy.
std::string eval_label(const RunHistory& h);

// The shared copy: the trainer's thread writes, the UI thread pulls.
class SharedHistory {
 public:
  // Starts a new run: `blank` carries its title and constants.
  void reset(const RunHistory& blank);
  void add(const train::StepMetrics& m);
  void add(const train::TensorHistogram& h);
  void add(const train::TensorUnderflow& u);
  void add_eval(EvalPoint e);
  void set_status(const std::string& s);
  void set_bn_layers(uint32_t step, std::vector<BnLayerStats> layers);
  void set_generated_text(const std::string& text);
  // Brings `dst` up to date: appends the new records, replaces the rest.
  // A reset since the last pull starts dst over.
  void pull(RunHistory& dst);
  // A full copy (exporting metrics, the end-of-run report).
  RunHistory snapshot();

 private:
  std::mutex mu_;
  RunHistory h_;
  uint64_t generation_ = 0;  // bumped by reset()
  uint64_t pulled_generation_ = ~0ull;
};

}  // namespace vkamp::app
