#include "app/run_history.hpp"

#include <algorithm>
#include <cmath>

#include "vkamp/io/metrics_log.hpp"

namespace vkamp::app {
namespace {

// Exponential moving average of the loss; long enough to read a trend
// through minibatch noise, short enough to follow a learning-rate change.
constexpr float kSmoothing = 0.05f;

template <class T>
void append_from(std::vector<T>& dst, const std::vector<T>& src) {
  if (src.size() > dst.size()) dst.insert(dst.end(), src.begin() + dst.size(), src.end());
}

void append_from(UnderflowSeries& dst, const UnderflowSeries& src) {
  append_from(dst.step, src.step);
  append_from(dst.lost_unscaled, src.lost_unscaled);
  append_from(dst.subnormal, src.subnormal);
  append_from(dst.zeros, src.zeros);
  append_from(dst.headroom, src.headroom);
}

}  // namespace

void UnderflowSeries::add(uint32_t s, const train::UnderflowShares& u) {
  step.push_back(float(s));
  lost_unscaled.push_back(float(100 * u.lost_unscaled));
  subnormal.push_back(float(100 * u.subnormal));
  zeros.push_back(float(100 * u.zeros));
  headroom.push_back(u.headroom ? float(*u.headroom) : NAN);
}

uint32_t RunHistory::backoffs() const {
  return uint32_t(std::count_if(events.begin(), events.end(), [](auto& e) { return e.kind == ScaleChange::Backoff; }));
}

uint32_t RunHistory::growths() const { return uint32_t(events.size()) - backoffs(); }

void RunHistory::add(const train::StepMetrics& m) {
  if (!loss_scale.empty() && m.loss_scale != loss_scale.back())
    events.push_back({m.step, m.loss_scale < loss_scale.back() ? ScaleChange::Backoff : ScaleChange::Growth,
                      loss_scale.back(), m.loss_scale});
  raw_steps.push_back(m);
  step.push_back(float(m.step));
  loss.push_back(m.loss);
  // A skipped step's loss may be inf; it must not poison the average.
  float prev = loss_smooth.empty() ? m.loss : loss_smooth.back();
  if (!std::isfinite(prev)) prev = m.loss;
  loss_smooth.push_back(std::isfinite(m.loss) ? prev + kSmoothing * (m.loss - prev) : prev);
  loss_scale.push_back(m.loss_scale);
  grad_norm.push_back(m.grad_norm);
  step_ms.push_back(float(m.step_time_ms));
  skipped.push_back(m.skipped);
  if (m.skipped) skipped_steps.push_back(m.step);
  overflows += m.overflow;
  applied = m.applied;
  if (!gradients.empty()) underflow.add(m.step, gradients.of_step(m));
}

void RunHistory::add(const train::TensorUnderflow& u) {
  if (u.stats.size() != gradients.tensors.size()) return;
  raw_underflow.push_back(u);
  tensor_underflow.resize(u.stats.size());
  for (size_t i = 0; i < u.stats.size(); ++i) tensor_underflow[i].add(u.step, gradients.of_tensor(i, u.stats[i]));
}

void RunHistory::add(const train::TensorHistogram& h) {
  raw_histograms.push_back(h);
  for (auto& old : histograms)
    if (old.tensor == h.tensor) {
      old = h;
      return;
    }
  histograms.push_back(h);
}

void RunHistory::export_jsonl(const std::string& path) const {
  io::MetricsLog log(path, gradients);
  size_t h = 0, u = 0, e = 0;
  // An evaluation after `step` steps follows the record of step `step` - 1,
  // as in the live --metrics file.
  auto write_eval = [&](const EvalPoint& p) {
    train::EpochEnd end;
    end.epoch = p.epoch;
    end.step = p.step;
    end.metric = p.metric;
    end.value = p.accuracy;
    log.write(end);
  };
  for (const train::StepMetrics& m : raw_steps) {
    log.write(m);
    // A histogram belongs after the record of the step it was taken at.
    for (; h < raw_histograms.size() && raw_histograms[h].step <= m.step; ++h) log.write(raw_histograms[h]);
    for (; u < raw_underflow.size() && raw_underflow[u].step <= m.step; ++u) log.write(raw_underflow[u]);
    for (; e < evals.size() && evals[e].step <= m.step + 1; ++e) write_eval(evals[e]);
  }
  for (; h < raw_histograms.size(); ++h) log.write(raw_histograms[h]);
  for (; u < raw_underflow.size(); ++u) log.write(raw_underflow[u]);
  for (; e < evals.size(); ++e) write_eval(evals[e]);
}

std::string eval_label(const RunHistory& h) {
  if (!h.eval_name.empty()) return h.eval_name;
  return "test " + (h.evals.empty() ? std::string("accuracy") : h.evals.back().metric);
}

void SharedHistory::reset(const RunHistory& blank) {
  std::lock_guard lock(mu_);
  h_ = blank;
  ++generation_;
}

void SharedHistory::add(const train::StepMetrics& m) {
  std::lock_guard lock(mu_);
  h_.add(m);
}

void SharedHistory::add(const train::TensorHistogram& h) {
  std::lock_guard lock(mu_);
  h_.add(h);
}

void SharedHistory::add(const train::TensorUnderflow& u) {
  std::lock_guard lock(mu_);
  h_.add(u);
}

void SharedHistory::add_eval(EvalPoint e) {
  std::lock_guard lock(mu_);
  h_.evals.push_back(e);
}

void SharedHistory::set_status(const std::string& s) {
  std::lock_guard lock(mu_);
  h_.status = s;
}

void SharedHistory::set_bn_layers(uint32_t step, std::vector<BnLayerStats> layers) {
  std::lock_guard lock(mu_);
  h_.bn_step = step;
  h_.bn_layers = std::move(layers);
}

void SharedHistory::set_generated_text(const std::string& text) {
  std::lock_guard lock(mu_);
  h_.generated_text = text;
}

void SharedHistory::pull(RunHistory& dst) {
  std::lock_guard lock(mu_);
  if (pulled_generation_ != generation_) {
    dst = h_;
    pulled_generation_ = generation_;
    return;
  }
  append_from(dst.step, h_.step);
  append_from(dst.loss, h_.loss);
  append_from(dst.loss_smooth, h_.loss_smooth);
  append_from(dst.loss_scale, h_.loss_scale);
  append_from(dst.grad_norm, h_.grad_norm);
  append_from(dst.step_ms, h_.step_ms);
  append_from(dst.skipped, h_.skipped);
  append_from(dst.skipped_steps, h_.skipped_steps);
  append_from(dst.events, h_.events);
  append_from(dst.evals, h_.evals);
  append_from(dst.raw_steps, h_.raw_steps);
  append_from(dst.raw_histograms, h_.raw_histograms);
  append_from(dst.underflow, h_.underflow);
  dst.tensor_underflow.resize(h_.tensor_underflow.size());
  for (size_t i = 0; i < h_.tensor_underflow.size(); ++i) append_from(dst.tensor_underflow[i], h_.tensor_underflow[i]);
  append_from(dst.raw_underflow, h_.raw_underflow);
  dst.applied = h_.applied;
  dst.overflows = h_.overflows;
  dst.histograms = h_.histograms;
  dst.bn_layers = h_.bn_layers;
  dst.bn_step = h_.bn_step;
  dst.status = h_.status;
  dst.generated_text = h_.generated_text;
  dst.title = h_.title;
}

RunHistory SharedHistory::snapshot() {
  std::lock_guard lock(mu_);
  return h_;
}

}  // namespace vkamp::app
