// vkamp-bench conv: the convolution and pooling layers of LeNet-5 on
// Fashion-MNIST, forward and backward, timed dispatch by dispatch with GPU
// timestamps, so the time of a convolution splits into im2col, GEMM, bias
// and col2im. Beside the im2col + GEMM forward it times the direct kernel
// (conv_direct.comp), in the same runs. Method as `vkamp-bench gemm`
// (docs/design.md, "How performance is measured"): a warm-up run, then the median of many timed
// dispatches, the formats' runs taken in turns.
#include "conv_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/ops/bias.hpp"
#include "vkamp/ops/conv.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/ops/pool.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::bench {

const char* const kConvHelp =
    "Times LeNet-5's convolution and pooling layers on Fashion-MNIST (NHWC):\n"
    "\n"
    "  conv1  28x28x1  -> 28x28x6,  5x5, pad 2   (GEMM m,n,k = batch*784, 6, 25)\n"
    "  pool1  28x28x6  -> 14x14x6,  max 2x2, stride 2\n"
    "  conv2  14x14x6  -> 10x10x16, 5x5, pad 0   (GEMM m,n,k = batch*100, 16, 150)\n"
    "  pool2  10x10x16 -> 5x5x16,   max 2x2, stride 2\n"
    "\n"
    "one dispatch per step, each timed with GPU timestamp queries:\n"
    "  forward   im2col, GEMM Y = col W^T, bias add; and, for comparison,\n"
    "            the direct kernel (one thread per output element)\n"
    "  backward  GEMM dW = dY^T col, bias gradient, GEMM dcol = dY W, col2im\n"
    "            (conv1's dx is timed too, though a first layer needs none)\n"
    "\n"
    "Each layer and format records its steps R times in one sequence (R so\n"
    "that a run takes about 50 ms, at most 64), runs it once to warm up, then\n"
    "N more times; a step's time is the median of its R*N dispatches. The\n"
    "cases' runs are taken in turns, so a change in the machine's load shifts\n"
    "them alike and their ratios hold.\n";

namespace {

constexpr double kTargetRunMs = 50;
constexpr uint32_t kMaxReps = 64;

enum class Phase { Forward, Direct, Backward };

struct Step {
  std::string name;
  Phase phase;
  double flops;  // 0 where a step moves data only
  std::function<void(Sequence&)> record;
};

struct Layer {
  std::string name;
  bool is_conv;
  ops::Conv2d conv;
  ops::Pool2d pool;
};

// One layer in one format: its operands, a sequence holding R copies of
// its steps, and every timed dispatch of every step.
class Case {
 public:
  Case(Context& ctx, const Layer& layer, Format fmt, std::mt19937& gen) : layer_(layer), fmt_(fmt), seq_(ctx, true, 512) {
    // Operands live as long as the case; the steps hold pointers to them.
    auto buf = [&](uint64_t n) {
      buffers_.push_back(std::make_unique<Buffer>(random_buffer(ctx, fmt, n, gen)));
      return buffers_.back().get();
    };
    if (layer.is_conv) {
      const ops::Conv2d c = layer.conv;
      const uint32_t rows = uint32_t(c.col_rows()), kk = c.col_cols(), oc = c.out_c;
      Buffer *x = buf(c.input_elements()), *w = buf(c.weight_elements()), *b = buf(oc);
      Buffer *col = buf(c.col_elements()), *y = buf(c.output_elements()), *y2 = buf(c.output_elements());
      Buffer *dy = buf(c.output_elements()), *dw = buf(c.weight_elements()), *db = buf(oc);
      Buffer *dcol = buf(c.col_elements()), *dx = buf(c.input_elements());
      const double gemm_flops = 2.0 * rows * kk * oc;
      steps_ = {
          {"im2col", Phase::Forward, 0, [=](Sequence& s) { ops::im2col(s, fmt, c, *x, *col); }},
          {"GEMM Y = col W^T", Phase::Forward, gemm_flops,
           [=](Sequence& s) { ops::linear_forward(s, fmt, *col, *w, *y, rows, kk, oc); }},
          {"bias add", Phase::Forward, 0, [=](Sequence& s) { ops::bias_add_forward(s, fmt, *y, *b, rows, oc); }},
          {"direct conv", Phase::Direct, gemm_flops,
           [=](Sequence& s) { ops::conv2d_forward_direct(s, fmt, c, *x, *w, *b, *y2); }},
          {"GEMM dW = dY^T col", Phase::Backward, gemm_flops,
           [=](Sequence& s) { ops::linear_backward_weight(s, fmt, *dy, *col, *dw, rows, kk, oc); }},
          {"bias gradient", Phase::Backward, 0,
           [=](Sequence& s) { ops::bias_add_backward(s, fmt, *dy, *db, rows, oc); }},
          {"GEMM dcol = dY W", Phase::Backward, gemm_flops,
           [=](Sequence& s) { ops::linear_backward_input(s, fmt, *dy, *w, *dcol, rows, kk, oc); }},
          {"col2im", Phase::Backward, 0, [=](Sequence& s) { ops::col2im(s, fmt, c, *dcol, *dx); }},
      };
    } else {
      const ops::Pool2d p = layer.pool;
      Buffer *x = buf(p.input_elements()), *y = buf(p.output_elements());
      Buffer *dy = buf(p.output_elements()), *dx = buf(p.input_elements());
      steps_ = {
          {"max pool", Phase::Forward, 0, [=](Sequence& s) { ops::pool2d_forward(s, fmt, p, *x, *y); }},
          {"max pool gradient", Phase::Backward, 0,
           [=](Sequence& s) { ops::pool2d_backward(s, fmt, p, *x, *dy, *dx); }},
      };
    }
    times_.resize(steps_.size());
    // A one-copy probe run builds the pipelines, warms up and sizes R.
    record(1);
    std::vector<std::vector<double>> probe(steps_.size());
    run(probe);
    double ms = 0;
    for (auto& t : probe) ms += t.empty() ? 0 : t[0];
    reps_ = uint32_t(std::clamp(kTargetRunMs / std::max(ms, 1e-6), 1.0, double(kMaxReps)));
    record(reps_);
    run(probe);  // the warm-up run of this recording
  }

  void timed_run() {
    run(times_);
    ++runs_;
  }
  const Layer& layer() const { return layer_; }
  Format fmt() const { return fmt_; }
  const std::vector<Step>& steps() const { return steps_; }
  double median_ms(size_t step) const { return median(times_[step]); }
  uint32_t reps() const { return reps_; }
  int runs() const { return runs_; }
  bool host_clock() const { return host_clock_; }

 private:
  void record(uint32_t r) {
    seq_.begin();
    dispatches_.assign(steps_.size(), 0);
    for (uint32_t i = 0; i < r; ++i)
      for (size_t s = 0; s < steps_.size(); ++s) {
        uint32_t before = seq_.dispatch_count();
        steps_[s].record(seq_);
        dispatches_[s] = seq_.dispatch_count() - before;  // a split-k GEMM is two
      }
    seq_.end();
    recorded_ = r;
  }
  void run(std::vector<std::vector<double>>& out) {
    auto t0 = std::chrono::steady_clock::now();
    seq_.run();
    double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    auto t = seq_.timings();
    size_t per_copy = 0;
    for (uint32_t d : dispatches_) per_copy += d;
    if (t.size() != size_t(recorded_) * per_copy) {
      // No timestamps: the run's wall time, shared out evenly (a poor
      // split, flagged in the output).
      host_clock_ = true;
      for (size_t s = 0; s < steps_.size(); ++s)
        out[s].push_back(wall / (double(recorded_) * steps_.size()));
      return;
    }
    // A step's time is the sum of its dispatches.
    for (size_t i = 0, copy = 0; copy < recorded_; ++copy)
      for (size_t s = 0; s < steps_.size(); ++s) {
        double ms = 0;
        for (uint32_t d = 0; d < dispatches_[s]; ++d) ms += t[i++].ms;
        out[s].push_back(ms);
      }
  }

  Layer layer_;
  Format fmt_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::vector<Step> steps_;
  Sequence seq_;
  std::vector<std::vector<double>> times_;
  std::vector<uint32_t> dispatches_;  // per step, in one copy
  uint32_t reps_ = 1, recorded_ = 0;
  int runs_ = 0;
  bool host_clock_ = false;
};

std::vector<Layer> lenet_layers(uint32_t batch) {
  auto conv = [&](const char* name, uint32_t hw, uint32_t in_c, uint32_t out_c, uint32_t pad) {
    Layer l{name, true, {}, {}};
    l.conv.batch = batch;
    l.conv.in_h = l.conv.in_w = hw;
    l.conv.in_c = in_c;
    l.conv.out_c = out_c;
    l.conv.kernel = 5;
    l.conv.stride = 1;
    l.conv.pad = pad;
    return l;
  };
  auto pool = [&](const char* name, uint32_t hw, uint32_t channels) {
    Layer l{name, false, {}, {}};
    l.pool.kind = ops::PoolKind::Max;
    l.pool.batch = batch;
    l.pool.in_h = l.pool.in_w = hw;
    l.pool.channels = channels;
    l.pool.window = 2;
    l.pool.stride = 2;
    return l;
  };
  return {conv("conv1", 28, 1, 6, 2), pool("pool1", 28, 6), conv("conv2", 14, 6, 16, 0), pool("pool2", 10, 16)};
}

}  // namespace

int run_conv(const std::string& device, int repeats, uint32_t batch, std::vector<Format> formats) {
  Context ctx(bench_context_options(device));
  const auto& info = ctx.info();
  std::sort(formats.begin(), formats.end());
  formats.erase(std::unique(formats.begin(), formats.end()), formats.end());
  if (repeats == 0) repeats = 7;

  std::printf("device   [%u] %s (%s)\n", info.index, info.name.c_str(), info.driver.c_str());
  std::printf("path     %s; fp16 runs the \"%s\" shader variant\n", precision_path_name(ctx.path()),
              ctx.variant(Format::F16).c_str());
  std::printf("model    LeNet-5 on 28x28x1 inputs, batch %u, NHWC\n", batch);
  std::fflush(stdout);

  std::mt19937 gen(12345);
  std::vector<std::unique_ptr<Case>> cases;
  for (const Layer& l : lenet_layers(batch))
    for (Format f : formats) cases.push_back(std::make_unique<Case>(ctx, l, f, gen));
  for (int i = 0; i < repeats; ++i)
    for (auto& c : cases) c->timed_run();
  bool host_clock = false;
  for (auto& c : cases) host_clock = host_clock || c->host_clock();

  std::printf("timing   %s, median per dispatch of R copies x %d timed runs, after a warm-up run\n\n",
              host_clock ? "HOST CLOCK (no GPU timestamps: per-step split is an even share)" : "GPU timestamps",
              repeats);
  std::printf("%-6s %-20s %-6s %10s %9s %4s\n", "layer", "step", "format", "median ms", "GFLOP/s", "R");
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = *cases[ci];
    if (ci > 0) std::printf("\n");
    for (size_t s = 0; s < c.steps().size(); ++s) {
      const Step& st = c.steps()[s];
      double ms = c.median_ms(s);
      char rate[16] = "";
      if (st.flops > 0) std::snprintf(rate, sizeof rate, "%.2f", st.flops / (ms * 1e6));
      std::printf("%-6s %-20s %-6s %10.3f %9s %4u\n", c.layer().name.c_str(), st.name.c_str(), format_name(c.fmt()),
                  ms, rate, c.reps());
    }
  }

  // Per layer and format: the forward through im2col + GEMM + bias against
  // the direct kernel; the backward split into its parts; and a training
  // step both ways. The backward's dW needs col, so with a direct forward
  // the step still runs im2col, in the backward instead.
  std::printf("\nsummary, ms per batch (backward split in shares)\n");
  std::printf("%-6s %-6s %8s %8s %8s | %8s %6s %6s %6s | %9s %9s %8s\n", "layer", "format", "fwd i2c", "fwd dir",
              "dir/i2c", "backward", "GEMMs", "col2im", "bias", "step i2c", "step dir", "dir/i2c");
  struct Totals {
    double fwd = 0, dir = 0, bwd = 0, step = 0, step_dir = 0;
  };
  std::map<Format, Totals> totals;
  for (const auto& cp : cases) {
    const Case& c = *cp;
    double fwd = 0, dir = 0, bwd = 0, gemm_b = 0, col2im = 0, bias = 0, i2c = 0;
    for (size_t s = 0; s < c.steps().size(); ++s) {
      const Step& st = c.steps()[s];
      double ms = c.median_ms(s);
      if (st.phase == Phase::Forward) fwd += ms;
      if (st.phase == Phase::Direct) dir += ms;
      if (st.name == "im2col") i2c = ms;
      if (st.phase == Phase::Backward) {
        bwd += ms;
        if (st.name.rfind("GEMM", 0) == 0) gemm_b += ms;
        if (st.name == "col2im") col2im += ms;
        if (st.name == "bias gradient") bias += ms;
      }
    }
    Totals& t = totals[c.fmt()];
    t.fwd += fwd;
    t.bwd += bwd;
    t.step += fwd + bwd;
    if (c.layer().is_conv) {
      double step_dir = dir + i2c + bwd;
      t.dir += dir;
      t.step_dir += step_dir;
      std::printf("%-6s %-6s %8.2f %8.2f %7.2fx | %8.2f %5.0f%% %5.0f%% %5.0f%% | %9.2f %9.2f %7.2fx\n",
                  c.layer().name.c_str(), format_name(c.fmt()), fwd, dir, dir / fwd, bwd, 100 * gemm_b / bwd,
                  100 * col2im / bwd, 100 * bias / bwd, fwd + bwd, step_dir, step_dir / (fwd + bwd));
    } else {
      t.dir += fwd;  // pools run the same kernels either way
      t.step_dir += fwd + bwd;
      std::printf("%-6s %-6s %8.2f %8s %8s | %8.2f %6s %6s %6s | %9.2f\n", c.layer().name.c_str(),
                  format_name(c.fmt()), fwd, "", "", bwd, "", "", "", fwd + bwd);
    }
  }
  std::printf("\nall four layers, ms per batch of %u:\n", batch);
  std::printf("%-6s %9s %9s %9s %9s %9s %8s\n", "format", "fwd i2c", "fwd dir", "backward", "step i2c", "step dir",
              "dir/i2c");
  for (Format f : formats) {
    const Totals& t = totals[f];
    std::printf("%-6s %9.2f %9.2f %9.2f %9.2f %9.2f %7.2fx\n", format_name(f), t.fwd, t.dir, t.bwd, t.step,
                t.step_dir, t.step_dir / t.step);
  }
  std::printf(
      "\ni2c: im2col + GEMM (+ bias); dir: the direct kernel. step: forward + backward, where \"step dir\"\n"
      "runs the direct forward and moves im2col to the backward (dW needs col). dir/i2c > 1: im2col +\n"
      "GEMM is faster. R: copies per run.\n");
  return 0;
}

}  // namespace vkamp::bench
