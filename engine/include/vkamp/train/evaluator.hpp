// Inference with a training model, in batches of at most the model's
// max_rows, so callers have no batch limit: accuracy or mean squared error
// over a dataset, and the raw outputs of any number of rows. The rows go to
// the device a chunk at a time, so a set larger than device memory works.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/sequence.hpp"
#include "vkamp/data/host_data.hpp"
#include "vkamp/train/loss_kind.hpp"
#include "vkamp/train/model.hpp"

namespace vkamp::train {

class Evaluator {
 public:
  // `max_rows`: the rows the model was built for. `chunk_bytes`: the inputs
  // uploaded at a time (rounded to whole batches, at least one).
  Evaluator(Context& ctx, Model& model, LossKind loss, uint32_t max_rows, size_t chunk_bytes = size_t(32) << 20);

  // Accuracy (SoftmaxXent; over every position of a language model) or
  // mean squared error (MSE) over `data`.
  double evaluate(const data::HostData& data);
  // The mean cross-entropy (nats) over every target position of `data`
  // (SoftmaxXent); the mean squared error for MSE.
  double mean_loss(const data::HostData& data);
  // A classifier's accuracy and mean cross-entropy from one forward pass
  // (SoftmaxXent; for MSE both are the mean squared error).
  struct Scores {
    double accuracy = 0, loss = 0;
  };
  Scores scores(const data::HostData& data);
  // The model's outputs (fp32, rows x outputs) for `rows` rows of x (rows x inputs).
  std::vector<float> predict(const std::vector<float>& x, uint32_t rows);

  // When set, the rows evaluated so far and the set's rows, a few dozen
  // times over a pass: the work is then submitted in as many parts (a
  // progress bar for a long evaluation) instead of at once.
  std::function<void(uint64_t done, uint64_t total)> on_progress;

 private:
  // Uploads `values` in the model's storage format; inputs as the model
  // reads them (token ids as uint32); labels, one per position.
  Buffer upload(const std::vector<float>& values);
  Buffer upload_inputs(const std::vector<float>& x);
  Buffer upload_labels(const data::HostData& data);
  // The sum of sum_over(chunk) over chunks of `data` that fit one upload.
  template <class SumOver>
  auto sum_in_chunks(const data::HostData& data, SumOver sum_over) -> decltype(sum_over(data));
  // Runs, for every batch b of `rows`, the copy of its inputs from `x`, the
  // forward pass, then `after(seq, b, batch_rows)`; `first(seq)` is
  // recorded before them. One submission, or several with on_progress.
  template <class First, class After>
  void run_batches(const Buffer& x, uint32_t rows, First first, After after);
  // Over one chunk, from one forward pass: the rows classified correctly
  // and the summed cross-entropy (each only when asked for), and the rows
  // that are targets (data::kNotTarget), which both are means over.
  struct ClassTally {
    double correct = 0, loss = 0, targets = 0;
    ClassTally& operator+=(const ClassTally& o) {
      correct += o.correct, loss += o.loss, targets += o.targets;
      return *this;
    }
  };
  ClassTally classify_in(const data::HostData& chunk, bool correct, bool loss);
  double squared_error_in(const data::HostData& chunk);  // the sum of squared errors
  std::vector<float> predict_chunk(const std::vector<float>& x, uint32_t rows);
  uint32_t chunk_rows() const;

  Context& ctx_;
  Model& model_;
  LossKind loss_;
  uint32_t max_rows_;
  size_t chunk_bytes_;
  Buffer batch_x_, batch_y_, row_loss_;
  uint64_t rows_before_ = 0, rows_total_ = 0;  // on_progress: the chunks before this one, the whole set
};

}  // namespace vkamp::train
