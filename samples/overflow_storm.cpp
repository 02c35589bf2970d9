// overflow_storm: injects bursts of overflow (an inf written into a
// gradient) into an otherwise healthy run, to show dynamic loss scaling
// react: hysteresis absorbing the first overflows, backoff, skipped steps,
// and regrowth once the storm passes. Prints the timeline of events.
#include <cstdio>
#include <string>

#include "sample_main.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/platform.hpp"

using namespace vkamp;

int main(int argc, char** argv) {
  vkamp::platform::utf8_arguments(argc, argv);
  app::RunOptions cfg;
  cfg.batch = 64;
  cfg.epochs = 6;
  cfg.optimizer.lr = 0.05;
  cfg.optimizer.momentum = 0.9;
  cfg.scaler.initial_loss_scale = 1024;
  cfg.scaler.steps_per_increase = 15;
  cfg.scaler.hysteresis = 2;
  cfg.scaler.histogram_interval = 0;
  cfg.inject_overflow = config::parse_step_ranges("20-23,50,51,80-95,140");
  samples::SampleInfo info{
      "overflow_storm",
      "Trains a 32-64-10 ReLU MLP on a synthetic 10-class problem while injecting\n"
      "overflows (default --inject-overflow 20-23,50,51,80-95,140), with dynamic loss\n"
      "scaling tuned to react visibly: initial scale 1024, steps_per_increase 15,\n"
      "hysteresis 2. Prints each backoff, growth and skipped step, then a summary.\n"
      "Every flag can change that (try --overflow-policy retry or --hysteresis 1)."};
  return samples::sample_main(info, cfg, argc, argv, [](app::RunOptions& cfg, Context& ctx) {
    auto data = data::HostData::classification(data::make_classification(2048, 32, 10, cfg.seed));
    train::Trainer trainer(ctx, cfg, models::parse_model("32-64r-10"), train::LossKind::SoftmaxXent, data);
    samples::init_weights_from_file(cfg, trainer);
    if (!cfg.quiet)
      std::printf("overflow_storm: %s, hysteresis %u, steps_per_increase %u, policy %s\n",
                  samples::describe_run(cfg).c_str(), cfg.scaler.hysteresis, cfg.scaler.steps_per_increase,
                  config::policy_name(cfg.scaler.policy));
    std::vector<train::StepMetrics> steps;
    samples::Observers obs;
    obs.step = [&](const train::StepMetrics& m) { steps.push_back(m); };
    app::RunHistory history;
    auto s = samples::train_with_progress(trainer, cfg, "overflow_storm", obs, &history);

    uint32_t backoffs = 0, growths = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      const auto& m = steps[i];
      float next = i + 1 < steps.size() ? steps[i + 1].loss_scale : s.final_scale;
      std::string what;
      if (next < m.loss_scale) {
        what = "backoff " + std::to_string(int64_t(m.loss_scale)) + " -> " + std::to_string(int64_t(next));
        ++backoffs;
      } else if (next > m.loss_scale) {
        what = "growth " + std::to_string(int64_t(m.loss_scale)) + " -> " + std::to_string(int64_t(next));
        ++growths;
      } else if (m.overflow) {
        what = m.loss_scale <= cfg.scaler.min_loss_scale ? "overflow at min_loss_scale" : "overflow absorbed by hysteresis";
      }
      if (m.overflow && m.skipped) what += what.empty() ? "skipped" : ", skipped";
      if (m.overflow && !m.skipped) what += ", applied anyway";
      if (m.retries) what += " (retry " + std::to_string(m.retries) + ")";
      if (!what.empty() && !cfg.quiet) std::printf("  step %4u  scale %8g  %s\n", m.step, m.loss_scale, what.c_str());
    }
    double acc = trainer.evaluate(data);
    history.eval_name = "train accuracy";
    history.evals.push_back({s.steps, acc});
    std::printf("\n%u overflows, %u skipped steps, %u backoffs, %u growths, final scale %g, train accuracy %.1f%%\n",
                s.overflows, s.skipped, backoffs, growths, s.final_scale, 100 * acc);
    samples::write_report(cfg, history);
    if (s.failed) return samples::report_failure("overflow_storm", cfg, s);
    samples::save_weights(cfg, trainer, s);
    return 0;
  });
}
