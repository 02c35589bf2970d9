// The training loop on the GPU: loss-scale trajectories against the CPU
// rule, the overflow policies, clipping, accumulation, the schedule, a
// whole-model finite-difference check, convergence, fp16-vs-fp32 agreement,
// bit-exact resume, and no host waits in steady state.
#include <cmath>
#include <filesystem>
#include <random>

#include "scaler_reference.hpp"
#include "graph/graph_models.hpp"
#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "tiny_model.hpp"
#include "vkamp/ops/losses.hpp"
#include "vkamp/train/checkpoint_file.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/error.hpp"
#include "vkamp/train/step_params.hpp"
#include "vkamp/train/trainer.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::test {
namespace {

using train::StepMetrics;
using config::TrainConfig;
using train::Trainer;

bool injected(const TrainConfig& c, uint32_t step) {
  for (auto r : c.inject_overflow)
    if (step >= r.first && step <= r.last) return true;
  return false;
}

class Training : public GpuTest {};

TEST_F(Training, DynamicScaleFollowsTheReferenceRuleStepByStep) {
  TrainConfig c = tiny_config();
  c.scaler.initial_loss_scale = 1024;
  c.scaler.steps_per_increase = 3;
  c.inject_overflow = config::parse_step_ranges("2,5-7,12,20-29");
  c.scaler.min_loss_scale = 4;
  c.scaler.fail_after_overflows = 0;
  auto data = tiny_data(64, 1);
  Trainer t(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  auto steps = run_steps(t);
  ScalerReference ref(c.scaler);
  ASSERT_GT(steps.size(), 30u);
  bool reached_min = false;
  for (const auto& m : steps) {
    bool inj = injected(c, m.step);
    ASSERT_EQ(m.overflow, inj) << "step " << m.step;
    ASSERT_EQ(m.skipped, inj) << "step " << m.step;
    ASSERT_EQ(m.loss_scale, ref.step(inj)) << "step " << m.step;
    reached_min = reached_min || m.loss_scale == 4.0f;
  }
  EXPECT_TRUE(reached_min) << "the burst at 20-29 should pin the scale at min_loss_scale";
}

// Fault injection costs a run that does not use it nothing: no pass in the
// step, even with live injection allowed (as the studio allows it) until
// its button first arms it; and asking for a live injection without it is
// an error, not a silent no-op.
TEST_F(Training, FaultInjectionOffRecordsNoPass) {
  TrainConfig off = tiny_config(), live = tiny_config();
  live.live_fault_injection = true;
  auto data = tiny_data(64, 3);
  train::TrainSummary s_off, s_live;
  Trainer t_off(ctx(), off, tiny_model(), train::LossKind::SoftmaxXent, data);
  Trainer t_live(ctx(), live, tiny_model(), train::LossKind::SoftmaxXent, data);
  std::vector<StepMetrics> a = run_steps(t_off, &s_off), b = run_steps(t_live, &s_live);
  EXPECT_EQ(s_off.commands_per_step.dispatches, s_live.commands_per_step.dispatches);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].loss, b[i].loss) << "step " << i;  // the same bits
  EXPECT_THROW(t_off.inject_overflow_next(), vkamp::Error);
}

// The app's live controls, between steps: an overflow injected at the next
// step is caught and skipped there (the app turns live injection on); new knobs are validated, and the
// current scale is clamped into the new [min, max].
TEST_F(Training, LiveInjectionAndKnobsActAtTheNextStep) {
  TrainConfig c = tiny_config();
  c.live_fault_injection = true;
  c.scaler.initial_loss_scale = 1024;
  c.scaler.steps_per_increase = 1000;
  auto data = tiny_data(64, 3);
  Trainer t(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  std::vector<StepMetrics> steps;
  t.on_step = [&](const StepMetrics& m) { steps.push_back(m); };
  t.start();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(t.advance());
  t.sync();
  ASSERT_EQ(steps.size(), 5u);
  for (auto& m : steps) ASSERT_FALSE(m.overflow) << "step " << m.step;

  t.inject_overflow_next();
  ASSERT_TRUE(t.advance());
  t.sync();
  ASSERT_EQ(steps.size(), 6u);
  EXPECT_TRUE(steps[5].overflow);
  EXPECT_TRUE(steps[5].skipped);
  EXPECT_EQ(steps[5].loss_scale, 1024.0f);  // the scale it ran at; the backoff follows
  ASSERT_TRUE(t.advance());
  t.sync();
  EXPECT_FALSE(steps[6].overflow) << "one injection, one step";
  EXPECT_EQ(steps[6].loss_scale, 512.0f);

  config::ScalerConfig bad = c.scaler;
  bad.min_loss_scale = 64;
  bad.max_loss_scale = 32;
  EXPECT_THROW(t.set_scaler(bad), vkamp::ConfigError);
  config::ScalerConfig lower = c.scaler;
  lower.max_loss_scale = 128;
  t.set_scaler(lower);
  EXPECT_EQ(t.read_state().scale, 128.0f);
  ASSERT_TRUE(t.advance());
  t.sync();
  EXPECT_EQ(steps.back().loss_scale, 128.0f);
  config::ScalerConfig static_mode = c.scaler;
  static_mode.mode = config::LossScaleMode::Static;
  EXPECT_THROW(t.set_scaler(static_mode), vkamp::ConfigError) << "the mode is fixed for a run";
  while (t.advance()) {
  }
  train::TrainSummary s = t.finish();
  EXPECT_FALSE(s.failed) << s.failure;
  EXPECT_EQ(s.skipped, 1u);
  // The button armed the pass: the step was recorded again with it.
  TrainConfig off = c;
  off.live_fault_injection = false;
  train::TrainSummary s_off;
  Trainer t_off(ctx(), off, tiny_model(), train::LossKind::SoftmaxXent, data);
  run_steps(t_off, &s_off);
  EXPECT_EQ(s.commands_per_step.dispatches, s_off.commands_per_step.dispatches + 1);
}

TEST_F(Training, HysteresisToleratesOverflowsUntilGrowthRefillsIt) {
  TrainConfig c = tiny_config();
  c.scaler.initial_loss_scale = 256;
  c.scaler.steps_per_increase = 4;
  c.scaler.hysteresis = 3;
  c.inject_overflow = config::parse_step_ranges("1,2,3,4,10,16-17");
  auto data = tiny_data(64, 2);
  Trainer t(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  auto steps = run_steps(t);
  ScalerReference ref(c.scaler);
  for (const auto& m : steps) ASSERT_EQ(m.loss_scale, ref.step(injected(c, m.step))) << "step " << m.step;
  // Steps 1 and 2 are absorbed by hysteresis 3; the third overflow backs off.
  EXPECT_EQ(steps[3].loss_scale, 256.0f);
  EXPECT_EQ(steps[4].loss_scale, 128.0f);
}

// DeepSpeed's consecutive_hysteresis: every clean step refills the
// hysteresis, so only overflows without a clean step between them count.
// Overflows at 3 and 6 with hysteresis 2: without it, the second one backs
// off (the first used up the tolerance); with it, steps 4-5 refilled it.
TEST_F(Training, ConsecutiveHysteresisRefillsOnCleanSteps) {
  TrainConfig c = tiny_config();
  c.scaler.initial_loss_scale = 1024;
  c.scaler.steps_per_increase = 1000;  // no growth refills it
  c.scaler.hysteresis = 2;
  c.inject_overflow = config::parse_step_ranges("3,6,10-11");
  auto data = tiny_data(64, 2);
  Trainer plain(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  auto a = run_steps(plain);
  c.scaler.consecutive_hysteresis = true;
  Trainer refilled(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  auto b = run_steps(refilled);
  ASSERT_GE(a.size(), 13u);
  ASSERT_GE(b.size(), 13u);
  EXPECT_EQ(a[7].loss_scale, 512.0f) << "the overflow at 6 backed off";
  EXPECT_EQ(b[7].loss_scale, 1024.0f) << "clean steps 4-5 refilled the hysteresis";
  // Without it each later overflow backs off (10, 11); with it, two in a
  // row exhaust it once.
  EXPECT_EQ(a[12].loss_scale, 128.0f);
  EXPECT_EQ(b[12].loss_scale, 512.0f);
}

TEST_F(Training, ScaleNeverBecomesInfOrZero) {
  TrainConfig c = tiny_config();
  c.scaler.initial_loss_scale = 1e38;
  c.scaler.steps_per_increase = 1;  // grows every clean step
  auto data = tiny_data(64, 3);
  Trainer t(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  for (const auto& m : run_steps(t)) ASSERT_TRUE(std::isfinite(m.loss_scale) && m.loss_scale > 0) << m.step;

  TrainConfig d = tiny_config();
  d.scaler.initial_loss_scale = 2;
  d.scaler.min_loss_scale = 0.5;
  d.scaler.fail_after_overflows = 0;
  d.inject_overflow = config::parse_step_ranges("0-20");
  Trainer t2(ctx(), d, tiny_model(), train::LossKind::SoftmaxXent, data);
  auto steps = run_steps(t2);
  EXPECT_EQ(steps[20].loss_scale, 0.5f);
}

// The cosine schedule with warmup, through a skipped step: every rate the
// GPU used is the host's double-precision rate rounded once to fp32
// (lr_schedule_table), bit for bit. The GPU used to compute it with fp32
// cos, which drivers round differently (and lavapipe's differs from the
// double one by an ulp at some steps).
TEST_F(Training, CosineRatesAreTheHostTableBitForBit) {
  TrainConfig c = tiny_config(Format::F32);
  c.epochs = 4;
  c.optimizer.lr = 0.3;
  c.optimizer.schedule = config::LrSchedule::Cosine;
  c.optimizer.warmup_steps = 5;
  c.inject_overflow = config::parse_step_ranges("7");
  auto data = tiny_data(64, 4);
  Trainer t(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  auto steps = run_steps(t);
  const std::vector<float> table = train::lr_schedule_table(c.optimizer, t.budget());
  ASSERT_EQ(table.size(), t.budget());
  ASSERT_EQ(steps.size(), t.budget() + 1);  // one skipped
  for (size_t i = 0; i < steps.size(); ++i) {
    // applied counts this step's update; the rate is the one before it.
    const uint32_t k = steps[i].applied - (steps[i].skipped ? 0 : 1);
    EXPECT_EQ(steps[i].lr, table[k]) << "step " << i;
  }
  // The table itself: warmup to the base rate, then half a cosine, in double.
  const double lr = float(c.optimizer.lr), n = t.budget(), w = 5;
  for (uint32_t k = 0; k < t.budget(); ++k) {
    const double want = k < 5 ? lr * (k + 1) / w : lr * 0.5 * (1 + std::cos(3.141592653589793 * ((k - w) / (n - w))));
    EXPECT_EQ(table[k], float(want)) << "update " << k;
  }
}

TEST_F(Training, SkipLeavesWeightsAndScheduleUntouched) {
  TrainConfig c = tiny_config(Format::F32);
  c.epochs = 1;
  c.optimizer.schedule = config::LrSchedule::Step;
  c.optimizer.step_size = 2;
  c.optimizer.gamma = 0.5;
  c.inject_overflow = config::parse_step_ranges("3");
  auto data = tiny_data(64, 4);
  Trainer t(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  auto steps = run_steps(t);
  ASSERT_EQ(steps.size(), 9u);  // 8 updates + 1 skipped
  EXPECT_TRUE(steps[3].skipped);
  EXPECT_EQ(steps[3].applied, 3u);
  // lr halves every 2 applied updates; the skipped step does not advance it.
  // Exact: the rates come from the host's table (0.1f / 2^k rounds to the
  // literals), never from the driver's pow (NVIDIA's was 5 ulps off).
  float want[] = {0.1f, 0.1f, 0.05f, 0.05f, 0.05f, 0.025f, 0.025f, 0.0125f, 0.0125f};
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i].lr, want[i]) << "step " << i;
  auto st = t.read_state();
  EXPECT_EQ(st.applied, 8u);
  EXPECT_EQ(st.skipped_total, 1u);
  EXPECT_EQ(st.cursor, 9u) << "a skipped step consumes its batch";
}

// The apply policy (applies, then stops on non-finite weights) is in
// test_overflow_policies.cpp.

TEST_F(Training, RetryRecomputesTheSameBatchAtTheLowerScale) {
  TrainConfig c = tiny_config();
  c.epochs = 1;
  c.scaler.policy = config::OverflowPolicy::Retry;
  c.scaler.max_retries = 2;
  c.scaler.initial_loss_scale = 1024;
  c.inject_overflow = config::parse_step_ranges("2-3,6-8");
  auto data = tiny_data(64, 6);
  Trainer t(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  auto steps = run_steps(t);
  // 2-3: retried twice then the batch succeeds at step 4 on the same data.
  EXPECT_EQ(steps[2].cursor, 2u);
  EXPECT_EQ(steps[3].cursor, 2u);
  EXPECT_EQ(steps[4].retries, 2u);
  EXPECT_EQ(steps[4].loss, steps[2].loss) << "a retry recomputes the same batch";
  EXPECT_EQ(steps[4].loss_scale, 256.0f);
  EXPECT_FALSE(steps[4].skipped);
  // 6-8: two retries, then the third overflow gives up and skips the batch.
  EXPECT_EQ(steps[8].retries, 2u);
  EXPECT_TRUE(steps[8].skipped);
  EXPECT_EQ(steps[9].retries, 0u);
  EXPECT_EQ(steps[9].cursor, steps[8].cursor + 1u) << "the skipped batch is consumed";
  auto st = t.read_state();
  EXPECT_EQ(st.applied, 8u);
  EXPECT_EQ(st.skipped_total, 1u);
}

// One SGD step from known weights: the applied change is lr x the clipped,
// unscaled gradient.
std::vector<float> one_step_delta(const TrainConfig& c, const data::HostData& data, Trainer** keep = nullptr) {
  Trainer t(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  auto before = t.model().read_master();
  run_steps(t);
  auto after = t.model().read_master();
  std::vector<float> d(before.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = (before[i] - after[i]) / float(c.optimizer.lr);
  (void)keep;
  return d;
}

TEST_F(Training, ClipsByNormAfterUnscaling) {
  auto data = tiny_data(8, 8);
  TrainConfig c = tiny_config(Format::F32);
  c.epochs = 1;  // one step: 8 examples, batch 8
  c.scaler.initial_loss_scale = 4096;  // the clip must not see the scale
  auto g = one_step_delta(c, data);
  double norm = 0;
  for (float v : g) norm += double(v) * v;
  norm = std::sqrt(norm);
  ASSERT_GT(norm, 0.05);
  c.clip.max_norm = norm / 4;
  auto clipped = one_step_delta(c, data);
  double cn = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    cn += double(clipped[i]) * clipped[i];
    EXPECT_NEAR(clipped[i], g[i] / 4, 1e-4 * norm) << i;
  }
  EXPECT_NEAR(std::sqrt(cn), norm / 4, 1e-3 * norm);
}

TEST_F(Training, ClipsByValueAfterUnscaling) {
  auto data = tiny_data(8, 9);
  TrainConfig c = tiny_config(Format::F32);
  c.epochs = 1;
  c.scaler.initial_loss_scale = 4096;
  auto g = one_step_delta(c, data);
  float mx = 0;
  for (float v : g) mx = std::max(mx, std::abs(v));
  c.clip.max_value = mx / 3;
  auto clipped = one_step_delta(c, data);
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(clipped[i], std::clamp(g[i], -mx / 3, mx / 3), 1e-4 * mx) << i;
}

// Accumulation against one large batch, in every format:
// test_grad_accumulation.cpp.

TEST_F(Training, OverflowInOneMicroBatchSkipsTheWholeUpdate) {
  auto data = tiny_data(32, 11);
  TrainConfig c = tiny_config();
  c.batch = 8;
  c.grad_accum = 2;
  c.epochs = 1;
  c.inject_overflow = config::parse_step_ranges("0");  // into micro-batch 0 of step 0
  Trainer t(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  auto steps = run_steps(t);
  ASSERT_GE(steps.size(), 1u);
  EXPECT_TRUE(steps[0].overflow);
  EXPECT_TRUE(steps[0].skipped);
  EXPECT_EQ(steps[0].applied, 0u);
  EXPECT_EQ(steps[0].cursor, 2u) << "both micro-batches consumed";
}

TEST_F(Training, FailsFastWhenTheScaleSitsAtItsFloor) {
  TrainConfig c = tiny_config();
  c.scaler.initial_loss_scale = 8;
  c.scaler.min_loss_scale = 2;
  c.scaler.fail_after_overflows = 5;
  c.inject_overflow = config::parse_step_ranges("0-1000");
  auto data = tiny_data(64, 12);
  Trainer t(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  train::TrainSummary s;
  auto steps = run_steps(t, &s);
  EXPECT_TRUE(s.failed);
  EXPECT_NE(s.failure.find("min_loss_scale"), std::string::npos) << s.failure;
  // 8 -> 4 -> 2 (two overflows), then 5 more at the floor.
  EXPECT_EQ(steps.size(), 2u + 5u);
}

// The fail-fast message names what the step records point at: inputs that
// are NaN give a loss never finite (the data), and a learning rate that
// blows the weights past fp16 after a first update diverges (the learning
// rate).
TEST_F(Training, FailFastNamesTheDataOrTheLearningRate) {
  TrainConfig c = tiny_config();
  c.scaler.initial_loss_scale = 8;
  c.scaler.min_loss_scale = 2;
  c.scaler.fail_after_overflows = 5;
  auto nan_data = tiny_data(64, 12);
  for (size_t i = 0; i < nan_data.x.size(); i += 6) nan_data.x[i] = NAN;  // the first feature of every row
  Trainer bad_data(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, nan_data);
  const train::TrainSummary s = bad_data.run();
  ASSERT_TRUE(s.failed);
  EXPECT_NE(s.failure.find("the data is the likely cause"), std::string::npos) << s.failure;

  TrainConfig fast = c;
  fast.optimizer.lr = 1e7;  // one update takes the weights past fp16's 65504
  Trainer diverging(ctx(), fast, tiny_model(), train::LossKind::SoftmaxXent, tiny_data(64, 12));
  const train::TrainSummary d = diverging.run();
  ASSERT_TRUE(d.failed) << "applied " << d.applied;
  EXPECT_GE(d.applied, 1u);
  EXPECT_NE(d.failure.find("the learning rate (or the model) is the likely cause"), std::string::npos) << d.failure;
}

TEST_F(Training, WholeModelGradientsMatchFiniteDifferences) {
  // fp32, tanh: smooth everywhere, so central differences are accurate. The
  // check (and its bound) is the graph tests' one, on the model string's graph.
  expect_gradients_match(check_gradients(models::build_graph(models::parse_model("4-6t-3")), 5, 3, 3));
}

// Each 16-bit format with dynamic scaling trains the toy problem as fp32
// does. The bound is on the mean loss of the last 32 steps: 2% of fp32's.
// Rounding the working weights and activations to the format (half an
// ulp: 2^-11 fp16, 2^-10 cb16, 2^-8 = 0.4% bf16, relative) moves each
// logit by a few such roundings, about 4 x 0.4% for bf16 at worst, and
// the loss by no more than that relatively; the fp32 masters keep the
// trajectories together. Measured on lavapipe: within 0.04% for all three.
class FormatTracksFp32 : public GpuTestP<Format> {};

TEST_P(FormatTracksFp32, LossDecreasesAndTracksFp32) {
  auto data = tiny_data(256, 14);
  auto mean_loss = [](const std::vector<StepMetrics>& s, size_t from, size_t to) {
    double m = 0;
    for (size_t i = from; i < to; ++i) m += s[i].loss;
    return m / double(to - from);
  };
  TrainConfig c32 = tiny_config(Format::F32);
  c32.epochs = 6;
  c32.scaler.mode = config::LossScaleMode::None;
  Trainer t32(ctx(), c32, tiny_model(), train::LossKind::SoftmaxXent, data);
  auto s32 = run_steps(t32);
  TrainConfig c16 = tiny_config(GetParam());
  c16.epochs = 6;
  Trainer t16(ctx(), c16, tiny_model(), train::LossKind::SoftmaxXent, data);
  auto s16 = run_steps(t16);
  ASSERT_EQ(s32.size(), s16.size());
  size_t n = s32.size();
  double first = mean_loss(s32, 0, 8), last32 = mean_loss(s32, n - 32, n), last16 = mean_loss(s16, n - 32, n);
  EXPECT_LT(last32, 0.5 * first) << "fp32 loss did not fall";
  EXPECT_LT(last16, 0.5 * mean_loss(s16, 0, 8)) << format_name(GetParam()) << " loss did not fall";
  EXPECT_NEAR(last16, last32, 0.02 * last32) << format_name(GetParam()) << " with dynamic scaling drifted from fp32";
  EXPECT_NEAR(t16.evaluate(data), t32.evaluate(data), 0.05);
  RecordProperty("loss_fp32", std::to_string(last32));
  RecordProperty("loss_16bit", std::to_string(last16));
}

INSTANTIATE_TEST_SUITE_P(Formats, FormatTracksFp32, ::testing::Values(Format::F16, Format::BF16, Format::CB16),
                         [](const ::testing::TestParamInfo<Format>& i) { return std::string(format_name(i.param)); });

TEST_F(Training, ResumeFromACheckpointIsBitExact) {
  auto dir = std::filesystem::temp_directory_path() / ("vkamp-resume-" + std::to_string(vkamp::platform::process_id()));
  std::filesystem::create_directories(dir);
  auto data = tiny_data(64, 15);
  TrainConfig c = tiny_config();
  c.optimizer.kind = config::OptimizerKind::AdamW;
  c.optimizer.lr = 0.01;
  c.optimizer.weight_decay = 0.01;
  c.scaler.steps_per_increase = 5;
  c.inject_overflow = config::parse_step_ranges("9,13");
  // Straight through (32 steps), and interrupted after 2 epochs, then resumed to 4.
  const StraightAndResumed r = run_straight_and_resumed(ctx(), c, tiny_model(), data, 2, (dir / "ck.bin").string());
  const std::vector<StepMetrics>& full = r.full;
  const std::vector<StepMetrics>& rest = r.rest;
  ASSERT_FALSE(rest.empty());
  size_t k = rest[0].step;
  ASSERT_GT(k, 0u);
  ASSERT_EQ(k + rest.size(), full.size());
  for (size_t i = 0; i < rest.size(); ++i) {
    EXPECT_EQ(rest[i].loss, full[k + i].loss) << "step " << k + i;
    EXPECT_EQ(rest[i].loss_scale, full[k + i].loss_scale) << "step " << k + i;
    EXPECT_EQ(rest[i].skipped, full[k + i].skipped) << "step " << k + i;
  }
  std::filesystem::remove_all(dir);
}

TEST_F(Training, CorruptOrTruncatedCheckpointIsAClearError) {
  auto dir = std::filesystem::temp_directory_path() / ("vkamp-corrupt-" + std::to_string(vkamp::platform::process_id()));
  std::filesystem::create_directories(dir);
  auto path = (dir / "ck.bin").string();
  auto data = tiny_data(64, 16);
  TrainConfig c = tiny_config();
  c.epochs = 1;
  Trainer t(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  run_steps(t);
  t.save_checkpoint(path);
  auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size / 2);
  try {
    t.load_checkpoint(path);
    ADD_FAILURE() << "a truncated checkpoint loaded";
  } catch (const train::CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  // A checkpoint for another model is refused by name.
  t.save_checkpoint(path);
  Trainer other(ctx(), c, models::parse_model("6-4t-3"), train::LossKind::SoftmaxXent, data);
  EXPECT_THROW(other.load_checkpoint(path), train::CheckpointError);
  std::filesystem::remove_all(dir);
}

TEST_F(Training, SteadyStateStepsNeverBlockOnTheGpu) {
  auto data = tiny_data(256, 17);
  TrainConfig c = tiny_config();
  c.epochs = 2;  // 64 steps, 3 in flight
  Trainer t(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  train::TrainSummary s;
  run_steps(t, &s);
  EXPECT_EQ(s.applied, 64u);
  EXPECT_EQ(s.host_waits_in_loop, 0u);
}

}  // namespace
}  // namespace vkamp::test
