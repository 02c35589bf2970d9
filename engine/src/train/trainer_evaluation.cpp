// The Trainer's evaluations: the held-out set (--eval-iters' rows of it),
// what it is judged by, the evaluation at each epoch end, and evaluate,
// mean_loss and predict on data the caller gives.
#include "vkamp/train/trainer.hpp"

#include <chrono>

#include "vkamp/train/evaluator.hpp"

namespace vkamp::train {

void Trainer::set_held_out(data::HostData data) {
  const uint64_t rows = uint64_t(cfg_.eval_iters) * cfg_.batch;
  held_out_given_ = data.count;
  if (!cfg_.eval_iters || rows >= data.count) {
    held_out_ = std::move(data);
    return;
  }
  // Evenly spaced rows rather than the first ones: a language model's
  // validation windows follow the text, and its first pages are not the
  // whole of it. The same rows every time, so evaluations compare.
  std::vector<uint32_t> ids(rows);
  for (uint64_t i = 0; i < rows; ++i) ids[i] = uint32_t(i * data.count / rows);
  held_out_ = data.select(ids);
}

void Trainer::end_epoch_if_due() {
  if (!epoch_ended_) return;
  EpochEnd e = *epoch_ended_;
  epoch_ended_.reset();
  if (!on_epoch_end) return;
  const uint64_t w = ctx_.host_waits();
  if (held_out_ && held_out_->count) {
    const auto t0 = std::chrono::steady_clock::now();
    const HeldOut h = held_out_now(*held_out_);
    e.metric = h.metric;
    e.value = h.value;
    e.loss = h.loss;
    tally_.exclude(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  epoch_waits_ += ctx_.host_waits() - w;
  on_epoch_end(e);
}

double Trainer::evaluate(const data::HostData& data) {
  flush();
  return evaluator_->evaluate(data);
}

double Trainer::mean_loss(const data::HostData& data) {
  flush();
  return evaluator_->mean_loss(data);
}

Trainer::HeldOut Trainer::held_out(const data::HostData& data) {
  flush();
  return held_out_now(data);
}

// A language model (a prediction at every position) is judged by its loss,
// a classifier by its accuracy.
std::string Trainer::held_out_metric() const {
  return loss_kind_ == LossKind::MSE ? "mse" : model_->positions() > 1 ? "loss" : "accuracy";
}

Trainer::HeldOut Trainer::held_out_now(const data::HostData& data) {
  evaluator_->on_progress = on_eval_progress;
  HeldOut h;
  const std::string metric = held_out_metric();
  if (metric == "mse") {
    h = {"mse", evaluator_->evaluate(data)};
    h.loss = h.value;
  } else if (metric == "loss") {
    h = {"loss", evaluator_->mean_loss(data)};
    h.loss = h.value;
  } else {
    const Evaluator::Scores sc = evaluator_->scores(data);
    h = {"accuracy", sc.accuracy, sc.loss};
  }
  evaluator_->on_progress = nullptr;  // evaluate() and predict() report none
  return h;
}

std::vector<float> Trainer::predict(const std::vector<float>& x, uint32_t rows) {
  flush();
  return evaluator_->predict(x, rows);
}

}  // namespace vkamp::train
