// The GPU optimizer and learning-rate schedule against CPU references in
// double written from PyTorch's documentation (torch.optim.SGD with
// dampening 0 and nesterov off, Adam, AdamW, StepLR) and from config.hpp /
// the --help text for the cosine schedule, step by step over a run with one
// skipped (injected-overflow) step. The reference keeps its own weights,
// moments, step count and rate from the GPU's initial weights on; each
// gradient it computes itself in double (tiny_model.hpp) at the weights the
// GPU held before the step, so the GPU's gradient rounding is not fed back.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "support/gpu_test.hpp"
#include "tiny_model.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

using config::LrSchedule;
using config::OptimizerConfig;
using config::OptimizerKind;

// One optimizer in double, as the PyTorch docs write it.
struct OptimizerReference {
  // The GPU holds the hyperparameters as fp32 (TrainParams); the reference
  // starts from those same values (1 - beta2 of float(0.999) is 1.3e-5
  // away from 0.001, which no arithmetic bound would cover) and does
  // everything else in double.
  OptimizerReference(const OptimizerConfig& c, uint32_t budget, size_t n)
      : cfg(as_fp32(c)), budget(budget), buf(n, 0.0), m(n, 0.0), v(n, 0.0) {}

  static OptimizerConfig as_fp32(OptimizerConfig c) {
    for (double* x : {&c.lr, &c.momentum, &c.beta1, &c.beta2, &c.eps, &c.weight_decay, &c.gamma}) *x = float(*x);
    return c;
  }

  // The rate of the k-th applied update (k from 0); skipped steps do not count.
  double lr(uint32_t k) const {
    switch (cfg.schedule) {
      case LrSchedule::Constant: return cfg.lr;
      // StepLR stepped once per update: lr * gamma^floor(k / step_size).
      case LrSchedule::Step: return cfg.lr * std::pow(cfg.gamma, double(k / cfg.step_size));
      case LrSchedule::Cosine: {
        // "linear warmup" (config.hpp) up to the base rate, reached on the
        // last warmup update, then half a cosine from the base rate towards
        // 0 over the rest of the run ("a cosine schedule to 0", README),
        // as CosineAnnealingLR with T_max = budget - warmup, eta_min = 0.
        const double W = cfg.warmup_steps;
        if (k < cfg.warmup_steps) return cfg.lr * (k + 1) / W;
        return cfg.lr * 0.5 * (1 + std::cos(std::numbers::pi * (k - W) / (budget - W)));
      }
    }
    return 0;
  }

  // One update with the unscaled gradient g. Returns, per unit of lr, the
  // largest step any weight took (for the error bound).
  double update(std::vector<double>& w, std::vector<double> g) {
    const double a = lr(applied);
    double biggest = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      const double wd = decays.empty() || decays[i] ? cfg.weight_decay : 0.0;
      double step = 0;
      if (cfg.kind == OptimizerKind::SGD) {
        g[i] += wd * w[i];
        if (cfg.momentum > 0) {
          buf[i] = applied == 0 ? g[i] : cfg.momentum * buf[i] + g[i];  // dampening 0; first step clones g
          g[i] = buf[i];
        }
        step = g[i];
      } else {
        if (cfg.kind == OptimizerKind::AdamW) w[i] *= 1 - a * wd;  // decoupled
        else g[i] += wd * w[i];                                   // Adam: L2 in the gradient
        const double t = applied + 1;
        m[i] = cfg.beta1 * m[i] + (1 - cfg.beta1) * g[i];
        v[i] = cfg.beta2 * v[i] + (1 - cfg.beta2) * g[i] * g[i];
        const double mhat = m[i] / (1 - std::pow(cfg.beta1, t)), vhat = v[i] / (1 - std::pow(cfg.beta2, t));
        step = mhat / (std::sqrt(vhat) + cfg.eps);
      }
      w[i] -= a * step;
      biggest = std::max(biggest, std::abs(step) + wd * std::abs(w[i]));
    }
    ++applied;
    return biggest;
  }

  OptimizerConfig cfg;
  uint32_t budget;
  uint32_t applied = 0;
  std::vector<double> buf, m, v;  // SGD momentum; Adam first and second moments
  std::vector<bool> decays;       // per weight, when not all decay (decay_vectors = false)
};

struct Case {
  const char* name;
  OptimizerKind kind;
  double momentum;
  LrSchedule schedule;
  bool decay_vectors = true;
};

class OptimizerMatchesReference : public GpuTestP<Case> {};

TEST_P(OptimizerMatchesReference, StepByStepWithASkippedStep) {
  const Case& pc = GetParam();
  const models::ModelSpec spec = models::parse_model("4-5t-3");
  const auto data = one_batch_classification(8, 4, 3, 21);
  config::TrainConfig c;
  c.precision = Format::F32;
  c.batch = data.count;  // one step per epoch, always the whole data set
  c.epochs = 6;
  c.seed = 5;
  c.scaler.histogram_interval = 0;
  // A power-of-two scale: scaling and unscaling are exact in fp32, and the
  // backoff at the injected overflow changes the scale the later steps undo.
  c.scaler.initial_loss_scale = 1024;
  c.scaler.steps_per_increase = 1000;
  const uint32_t kSkipped = 2;
  c.inject_overflow = {{kSkipped, kSkipped}};
  OptimizerConfig& o = c.optimizer;
  o.kind = pc.kind;
  o.momentum = pc.momentum;
  o.lr = pc.kind == OptimizerKind::SGD ? 0.2 : 0.02;
  o.weight_decay = pc.kind == OptimizerKind::AdamW ? 0.1 : 0.01;
  o.schedule = pc.schedule;
  o.step_size = 2;
  o.gamma = 0.5;
  o.warmup_steps = 2;
  o.decay_vectors = pc.decay_vectors;

  train::Trainer t(ctx(), c, spec, train::LossKind::SoftmaxXent, data);
  std::vector<train::StepMetrics> recs;
  t.on_step = [&](const train::StepMetrics& m) { recs.push_back(m); };
  const auto tensors = t.model().tensors();
  const auto w0 = t.model().read_master();
  std::vector<double> w(w0.begin(), w0.end());
  OptimizerReference ref(o, t.budget(), w.size());
  if (!pc.decay_vectors) {  // the biases (between the weights in the layout) keep their values
    ref.decays.assign(w.size(), false);
    for (const auto& tn : tensors) std::fill_n(ref.decays.begin() + tn.offset, tn.size, tn.matrix);
  }
  const bool has_m1 = pc.kind != OptimizerKind::SGD || pc.momentum > 0, has_m2 = pc.kind != OptimizerKind::SGD;

  // Error bound, per weight after k applied updates. Each update of a
  // weight is about 20 fp32 operations (unscale, decay, moments, sqrt,
  // division, the rate from pow/cos, the bias corrections), and the gradient behind it about 30
  // more (a dot product over 8 rows and 5 features, softmax, tanh), each
  // off by at most u = 2^-24 relative to the numbers it combines: the
  // weight itself and lr times the update. Errors add from step to step
  // (the reference carries its own weights and moments), so the bound is
  // k * 64 u * (|w| + sum of lr * largest update so far): 64 = 50 rounded
  // up to leave room for the few larger intermediate terms. Adam's bias
  // corrections come from a table the host computes in double, one fp32
  // rounding each (u/2; u/4 through the sqrt), inside that budget.
  const double u = std::ldexp(1.0, -24);
  double moved = 0;  // sum over applied steps of lr * the largest step per unit lr
  const uint32_t attempts = t.budget() + 1;
  std::vector<float> prev_w = w0, prev_m1, prev_m2;
  t.start();
  for (uint32_t s = 0; s < attempts; ++s) {
    const bool more = t.advance();
    if (s + 1 < attempts) {
      ASSERT_TRUE(more) << "step " << s;  // the last may already see the run done
    }
    t.sync();
    ASSERT_EQ(recs.size(), s + 1u);
    const auto& rec = recs[s];
    const bool skip = s == kSkipped;
    ASSERT_EQ(rec.skipped, skip) << "step " << s;
    // The rate the step computed: a skipped step reports the rate the next
    // step then uses, so the schedule did not advance. fp32 pow/cos: a few ulps.
    EXPECT_NEAR(rec.lr, ref.lr(ref.applied), 8 * u * o.lr) << "step " << s;
    if (!skip) {
      // The gradient the step should have used: in double, at the weights
      // the GPU held, so the comparison measures this step's rounding only.
      std::vector<double> g;
      mlp_xent_grad(spec, tensors, std::vector<double>(prev_w.begin(), prev_w.end()), data, g);
      const double a = ref.lr(ref.applied);
      const double biggest = ref.update(w, g);
      moved += a * biggest;
    }
    ASSERT_EQ(rec.applied, ref.applied) << "step " << s;
    const double k = std::max(1u, ref.applied);
    const auto gw = t.model().read_master();
    const auto m1 = has_m1 ? t.model().moment1().read<float>() : std::vector<float>{};
    const auto m2 = has_m2 ? t.model().moment2().read<float>() : std::vector<float>{};
    double worst = 0;  // the largest error as a share of its bound, for the log
    for (const auto& tn : tensors) {
      // A gradient element from a cancelling sum errs relative to the sum's
      // terms, not to itself, so Adam's moments are bounded normwise: by the
      // tensor's largest |m| + sqrt(v) and v.
      double m_scale = 0, v_max = 0;
      if (has_m2)
        for (uint32_t i = tn.offset; i < tn.offset + tn.size; ++i) {
          m_scale = std::max(m_scale, std::abs(ref.m[i]) + std::sqrt(ref.v[i]));
          v_max = std::max(v_max, ref.v[i]);
        }
      for (uint32_t i = tn.offset; i < tn.offset + tn.size; ++i) {
        const double bound = k * 64 * u * (std::abs(w[i]) + moved);
        worst = std::max(worst, std::abs(gw[i] - w[i]) / bound);
        ASSERT_NEAR(gw[i], w[i], bound) << tn.name << "[" << i - tn.offset << "] step " << s;
        // Moments: sums of gradients, each off by ~50 u of the gradient's
        // magnitude, which |buf| + the rates moved (SGD), or |m| + sqrt(v)
        // (Adam: sqrt(v) >= sqrt(1 - beta2) |g|) stand in for.
        if (has_m1 && pc.kind == OptimizerKind::SGD) {
          ASSERT_NEAR(m1[i], ref.buf[i], k * 64 * u * (std::abs(ref.buf[i]) + moved / o.lr))
              << tn.name << " momentum step " << s;
        } else if (has_m1) {
          ASSERT_NEAR(m1[i], ref.m[i], k * 64 * u * m_scale) << tn.name << " m step " << s;
          // v gains (1 - beta2) g^2, off by 2 |g| dg: |g| ~ sqrt(v_i), dg ~ sqrt(v_max).
          ASSERT_NEAR(m2[i], ref.v[i], k * 128 * u * (ref.v[i] + std::sqrt(ref.v[i] * v_max)) + 1e-30)
              << tn.name << " v step " << s;
        }
      }
    }
    RecordProperty("worst_share_step_" + std::to_string(s), std::to_string(worst));
    if (skip) {
      // Bit for bit: the skipped step wrote no weight and no moment.
      EXPECT_EQ(gw, prev_w) << "a skipped step changed a weight";
      EXPECT_EQ(m1, prev_m1) << "a skipped step changed the first moment";
      EXPECT_EQ(m2, prev_m2) << "a skipped step changed the second moment";
    }
    prev_w = gw;
    prev_m1 = m1;
    prev_m2 = m2;
  }
  train::TrainSummary sum = t.finish();
  EXPECT_FALSE(sum.failed) << sum.failure;
  EXPECT_EQ(sum.applied, t.budget());
  EXPECT_EQ(sum.skipped, 1u);
}

const Case kCases[] = {
    {"sgd_step", OptimizerKind::SGD, 0.0, LrSchedule::Step},
    {"sgd_cosine", OptimizerKind::SGD, 0.0, LrSchedule::Cosine},
    {"momentum_step", OptimizerKind::SGD, 0.9, LrSchedule::Step},
    {"momentum_cosine", OptimizerKind::SGD, 0.9, LrSchedule::Cosine},
    {"adam_step", OptimizerKind::Adam, 0.0, LrSchedule::Step},
    {"adam_cosine", OptimizerKind::Adam, 0.0, LrSchedule::Cosine},
    {"adamw_step", OptimizerKind::AdamW, 0.0, LrSchedule::Step},
    {"adamw_cosine", OptimizerKind::AdamW, 0.0, LrSchedule::Cosine},
    {"adamw_cosine_matrices_only", OptimizerKind::AdamW, 0.0, LrSchedule::Cosine, false},
    {"momentum_step_matrices_only", OptimizerKind::SGD, 0.9, LrSchedule::Step, false},
};

INSTANTIATE_TEST_SUITE_P(Optimizers, OptimizerMatchesReference, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace vkamp::test
