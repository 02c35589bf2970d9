// vkamp-bench: throughput of vkamp's kernels, timed on the GPU with
// timestamp queries. `vkamp-bench gemm` times the three GEMMs of a linear
// layer in training (forward, dX, dW) at MLP-like and square shapes, per
// storage format, and prints GFLOP/s with each 16-bit format's rate relative
// to fp32. The method is docs/design.md, "How performance is measured": warm up, then the median of
// many timed dispatches. `vkamp-bench conv` (conv_bench.cpp) times LeNet-5's
// convolution and pooling layers step by step, im2col + GEMM against a
// direct convolution kernel. `vkamp-bench reduce` (reduce_bench.cpp) times
// the column sums and norms of a charlm step. `vkamp-bench generate`
// (generate_bench.cpp) times a GPT's tokens with and without the KV cache.
// `vkamp-bench gemm --peer`
// adds PyTorch's fp32 GEMM (bench/gemm_peer.py) on the CPU, shape by shape
// in the same run.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <sstream>
#include <stdexcept>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "app/charlm.hpp"
#include "app/cli.hpp"
#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/error.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/knobs.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/sequence.hpp"
#include "bench_util.hpp"
#include "conv_bench.hpp"
#include "gemm_tune_bench.hpp"
#include "generate_bench.hpp"
#include "attention_bench.hpp"
#include "reduce_bench.hpp"

namespace {

using vkamp::bench::median;
using vkamp::bench::random_buffer;

const char* kGemmHelp =
    "Times vkamp's GEMM in the three forms a linear layer Y = X W^T runs in\n"
    "training, with GPU timestamp queries, and prints GFLOP/s per storage format:\n"
    "\n"
    "  forward  Y  = X W^T    m,n,k = batch,out,in\n"
    "  dX       dX = dY W     m,n,k = batch,in,out\n"
    "  dW       dW = dY^T X   m,n,k = out,in,batch\n"
    "\n"
    "Shapes: the layers of a 784-256-256-10 MLP at batch 128, and square 512\n"
    "and 1024 (batch = in = out). --quick: the 784x256 and 256x10 layers and\n"
    "square 512, in fp32 and fp16 only. --shape MxNxK replaces them: each\n"
    "form then multiplies an MxK by a KxN operand into MxN.\n"
    "\n"
    "Each case records the same GEMM R times in one sequence (R chosen so that\n"
    "one run takes about 20 ms, at most 256), runs it once to warm up, then N\n"
    "more times, and reports the median per-dispatch GPU time of the R*N\n"
    "dispatches. The formats of one form and shape take turns run by run, so a\n"
    "change in the machine's load shifts them alike and rate/fp32 holds.\n"
    "GFLOP/s counts 2*m*n*k flops. A case whose dispatch would take\n"
    "longer than --max-dispatch-s (estimated from the best rate measured so far\n"
    "in its format) is skipped: on CPU drivers square 1024 takes seconds. Before\n"
    "a case over 512^3, each format times one 512^3 dispatch for its rate. Cases\n"
    "whose operands exceed the device's maxStorageBufferRange or memory are\n"
    "skipped and say so.\n"
    "\n"
    "--tune: instead, the GEMM tuner's sweep (fp16): per class of product\n"
    "(transposes and a size bucket of m, n, k; ops/gemm_kernel.hpp) in the --forms\n"
    "of the --shapes (default: charlm medium's and the MLP's layers, square\n"
    "1024-8192), times every kernel the device fits, the shader GEMM and each\n"
    "tensor-core shape, prints the table, and writes the winners to the\n"
    "per-device cache every later run reads ($XDG_CACHE_HOME or ~/.cache,\n"
    "vkamp/gemm-tune-*.txt; VKAMP_GEMM_TUNE).\n";

// The benchmarks, as --help lists them after the flags.
const char* kCommands =
    "vkamp-bench gemm: the GEMMs of a linear layer in training, GFLOP/s per format\n"
    "(vkamp-bench gemm --help).\n"
    "vkamp-bench conv: LeNet-5's convolution and pooling layers, step by step\n"
    "(vkamp-bench conv --help).\n"
    "vkamp-bench reduce: the reductions over rows of charlm medium, with GB/s\n"
    "(vkamp-bench reduce --help).\n"
    "vkamp-bench generate: a GPT's generation per token, KV cache against the\n"
    "full window (vkamp-bench generate --help).\n"
    "vkamp-bench attention: causal attention's three paths and the fused ones'\n"
    "tile sizes at charlm's shapes (vkamp-bench attention --help).\n";

constexpr double kTargetRunMs = 20;  // per timed run, to choose R
constexpr uint32_t kMaxDispatches = 256;
constexpr double kSlowDispatchMs = 250;  // fewer default repeats above this

enum class Form { Forward, BackwardInput, BackwardWeight };

const char* form_name(Form f) {
  switch (f) {
    case Form::Forward: return "forward X*W^T";
    case Form::BackwardInput: return "dX = dY*W";
    case Form::BackwardWeight: return "dW = dY^T*X";
  }
  return "?";
}

// The form's name in --forms and gemm_peer.py's --form.
const char* form_flag(Form f) {
  return f == Form::Forward ? "forward" : f == Form::BackwardInput ? "dx" : "dw";
}

struct Layer {
  uint32_t batch, in, out;
};

// The layer whose GEMM in form f is m x n, summing k products.
Layer layer_for(Form f, uint32_t m, uint32_t n, uint32_t k) {
  switch (f) {
    case Form::Forward: return {m, k, n};
    case Form::BackwardInput: return {m, n, k};
    case Form::BackwardWeight: return {k, n, m};
  }
  return {};
}

struct Shape {
  uint32_t m, n, k;
};
constexpr uint32_t kMaxShapeDim = 8192;

struct Case {
  Form form;
  Layer layer;
  vkamp::Format fmt;
  // The GEMM's output is m x n and each output sums k products.
  uint32_t m() const { return form == Form::BackwardWeight ? layer.out : layer.batch; }
  uint32_t n() const { return form == Form::Forward ? layer.out : layer.in; }
  uint32_t k() const {
    return form == Form::Forward ? layer.in : form == Form::BackwardInput ? layer.out : layer.batch;
  }
  double flops() const { return 2.0 * m() * n() * k(); }
};

struct Result {
  Case c;
  double ms = 0;            // median per dispatch
  uint32_t dispatches = 0;  // R, per run
  int runs = 0;             // timed runs
  std::string skipped;      // not empty: not run, and why
  double peer_ms = 0;       // > 0: PyTorch's median per call (fp32 rows)
  size_t group = 0;         // the table's order
};

// One case made ready to time: its operands, a sequence holding R copies
// of the GEMM, and the per-dispatch times of its timed runs.
class TimedCase {
 public:
  TimedCase(vkamp::Context& ctx, const Case& c, std::mt19937& gen)
      : c_(c),
        // Operands as the layer holds them: X batch x in, W out x in, dY batch x out.
        x_(random_buffer(ctx, c.fmt, size_t(c.layer.batch) * c.layer.in, gen)),
        w_(random_buffer(ctx, c.fmt, size_t(c.layer.out) * c.layer.in, gen)),
        dy_(random_buffer(ctx, c.fmt, size_t(c.layer.batch) * c.layer.out, gen)),
        out_(ctx, size_t(c.m()) * c.n() * vkamp::format_bytes(c.fmt)),
        seq_(ctx, /*timestamps=*/true, kMaxDispatches) {
    // A one-dispatch probe run builds the pipeline, warms up, and sizes R.
    std::vector<double> probe;
    record(1);
    run(&probe);
    probe_ms_ = probe[0];
    r_ = uint32_t(std::clamp(kTargetRunMs / std::max(probe_ms_, 1e-6), 1.0, double(kMaxDispatches)));
    if (r_ > 1) {
      record(r_);
      run(&probe);  // the warm-up run of this recording
    }
  }

  double probe_ms() const { return probe_ms_; }
  void timed_run() { run(&times_); }
  bool host_clock() const { return host_clock_; }
  Result result(int runs) const {
    Result r;
    r.c = c_;
    r.ms = median(times_);
    r.dispatches = r_;
    r.runs = runs;
    return r;
  }

 private:
  void record(uint32_t r) {
    const Layer& l = c_.layer;
    seq_.begin();
    for (uint32_t i = 0; i < r; ++i) {
      switch (c_.form) {
        case Form::Forward: vkamp::ops::linear_forward(seq_, c_.fmt, x_, w_, out_, l.batch, l.in, l.out); break;
        case Form::BackwardInput:
          vkamp::ops::linear_backward_input(seq_, c_.fmt, dy_, w_, out_, l.batch, l.in, l.out);
          break;
        case Form::BackwardWeight:
          vkamp::ops::linear_backward_weight(seq_, c_.fmt, dy_, x_, out_, l.batch, l.in, l.out);
          break;
      }
    }
    seq_.end();
    recorded_ = r;
  }
  // Per-dispatch times of one run: GPU timestamps, or the host clock over
  // the whole run where the device has none.
  void run(std::vector<double>* times) {
    auto t0 = std::chrono::steady_clock::now();
    seq_.run();
    double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    auto t = seq_.timings();
    if (t.empty()) {
      host_clock_ = true;
      times->insert(times->end(), recorded_, wall / recorded_);
    } else {
      for (const auto& d : t) times->push_back(d.ms);
    }
  }

  Case c_;
  vkamp::Buffer x_, w_, dy_, out_;
  vkamp::Sequence seq_;
  uint32_t r_ = 1, recorded_ = 0;
  double probe_ms_ = 0;
  bool host_clock_ = false;
  std::vector<double> times_;
};

class GemmBench {
 public:
  // repeats 0: 5 runs, or 3 where a dispatch is slow.
  GemmBench(vkamp::Context& ctx, int repeats) : ctx_(ctx), repeats_(repeats) {}

  // Cases of one form and shape in different formats, timed in turns (run i
  // of every format before run i+1 of any) so that a change in the machine's
  // load while they run shifts all of them alike and their ratio holds.
  std::vector<Result> measure(const std::vector<Case>& cases) {
    std::vector<std::unique_ptr<TimedCase>> timed;
    double slowest = 0;
    for (const Case& c : cases) {
      timed.push_back(std::make_unique<TimedCase>(ctx_, c, gen_));
      slowest = std::max(slowest, timed.back()->probe_ms());
    }
    int runs = repeats_ ? repeats_ : slowest > kSlowDispatchMs ? 3 : 5;
    for (int i = 0; i < runs; ++i)
      for (auto& t : timed) t->timed_run();
    std::vector<Result> out;
    for (auto& t : timed) {
      host_clock_ = host_clock_ || t->host_clock();
      out.push_back(t->result(runs));
    }
    return out;
  }

  bool host_clock() const { return host_clock_; }

 private:
  vkamp::Context& ctx_;
  int repeats_;
  std::mt19937 gen_{12345};
  bool host_clock_ = false;
};

// Progress on stderr, shown only once the run has taken a couple of seconds:
// one line rewritten in place on a terminal, a line per step otherwise.
class Progress {
 public:
  explicit Progress(size_t total) : total_(total), tty_(isatty(STDERR_FILENO)) {}
  void step(size_t done, const std::string& what) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (s < 2.0) return;
    shown_ = true;
    std::fprintf(stderr, "%s[%zu/%zu] %.0f s  %s%s", tty_ ? "\r\033[K" : "", done + 1, total_, s, what.c_str(),
                 tty_ ? "" : "\n");
    std::fflush(stderr);
  }
  void finish() {
    if (shown_ && tty_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  size_t total_;
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// The PyTorch peer: Python scripts beside this file's source, run with
// Debian's python3 (the one that has python3-torch).
#ifndef VKAMP_BENCH_SOURCE_DIR
#define VKAMP_BENCH_SOURCE_DIR "bench"
#endif
constexpr const char* kPeerPython = "/usr/bin/python3";

// A command's standard output, or an exception if it fails.
std::string capture(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run: " + cmd);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  if (pclose(p) != 0) throw std::runtime_error("failed: " + cmd);
  return out;
}

// Prints the peer's BLAS/threads line and the peak arithmetic; returns the
// peak in GFLOP/s.
double print_peer_info() {
  std::istringstream in(capture(std::string(kPeerPython) + " " VKAMP_BENCH_SOURCE_DIR "/peer_info.py"));
  double peak = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("peak_gflops=", 0) == 0) peak = std::stod(line.substr(12));
    else std::printf("%s\n", line.c_str());
  }
  return peak;
}

// PyTorch's median ms per call for one form and shape in fp32.
double peer_ms(const Case& c) {
  std::string out = capture(std::string(kPeerPython) + " " VKAMP_BENCH_SOURCE_DIR "/gemm_peer.py --form " +
                            form_flag(c.form) +
                            " --batch " + std::to_string(c.layer.batch) + " --in " + std::to_string(c.layer.in) +
                            " --out " + std::to_string(c.layer.out));
  size_t at = out.find("ms=");
  if (at == std::string::npos) throw std::runtime_error("gemm_peer.py printed no time: " + out);
  return std::stod(out.substr(at + 3));
}

// The items of a comma-separated list (an empty item stays, to be refused).
std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> items;
  for (size_t p = 0; p <= list.size();) {
    size_t q = list.find(',', p);
    if (q == std::string::npos) q = list.size();
    items.push_back(list.substr(p, q - p));
    p = q + 1;
  }
  return items;
}

// "MxNxK", each dimension a whole number from 1 to kMaxShapeDim.
std::optional<Shape> parse_shape(const std::string& text) {
  uint32_t d[3];
  size_t p = 0;
  for (int i = 0; i < 3; ++i) {
    size_t q = i < 2 ? text.find_first_of("xX", p) : text.size();
    if (q == std::string::npos || q == p || q - p > 5) return std::nullopt;
    std::string digits = text.substr(p, q - p);
    if (digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    unsigned long v = std::stoul(digits);
    if (v < 1 || v > kMaxShapeDim) return std::nullopt;
    d[i] = uint32_t(v);
    p = q + 1;
  }
  return Shape{d[0], d[1], d[2]};
}

// Why a case cannot run on this device ("" if it can): a descriptor range
// over maxStorageBufferRange is invalid, and the operands must fit in memory.
std::string cannot_run(const Case& c, const VkPhysicalDeviceLimits& limits, uint64_t device_bytes) {
  const Layer& l = c.layer;
  const uint64_t b = vkamp::format_bytes(c.fmt);
  uint64_t sizes[] = {uint64_t(l.batch) * l.in * b, uint64_t(l.out) * l.in * b, uint64_t(l.batch) * l.out * b,
                      uint64_t(c.m()) * c.n() * b};
  uint64_t largest = *std::max_element(std::begin(sizes), std::end(sizes));
  uint64_t total = sizes[0] + sizes[1] + sizes[2] + sizes[3];
  char why[160] = "";
  if (largest > limits.maxStorageBufferRange)
    std::snprintf(why, sizeof why, "an operand of %.0f MiB exceeds maxStorageBufferRange (%.0f MiB)",
                  largest / 1048576.0, limits.maxStorageBufferRange / 1048576.0);
  else if (device_bytes && total > device_bytes * 0.9)
    std::snprintf(why, sizeof why, "operands of %.1f GiB exceed 90%% of the device's %.1f GiB", total / 1073741824.0,
                  device_bytes / 1073741824.0);
  return why;
}

int run_gemm(const std::string& device, int repeats, double max_dispatch_s, bool quick, bool peer,
             std::vector<vkamp::Format> formats, const std::vector<Form>& forms, const std::vector<Shape>& shapes) {
  vkamp::Context ctx(vkamp::bench::bench_context_options(device));
  const auto& info = ctx.info();

  std::vector<Layer> layers;
  if (quick) layers = {{128, 784, 256}, {128, 256, 10}, {512, 512, 512}};
  else layers = {{128, 784, 256}, {128, 256, 256}, {128, 256, 10}, {512, 512, 512}, {1024, 1024, 1024}};
  std::sort(formats.begin(), formats.end());  // fp32 first: the other rows compare with it
  formats.erase(std::unique(formats.begin(), formats.end()), formats.end());

  // Groups of cases of one form and shape, one case per format, in the
  // table's order: a preset layer in each form, or a --shape's m, n, k.
  std::vector<std::vector<Case>> groups;
  auto add_group = [&](Form f, const Layer& l) {
    groups.emplace_back();
    for (vkamp::Format fmt : formats) groups.back().push_back({f, l, fmt});
  };
  if (shapes.empty()) {
    for (const Layer& l : layers)
      for (Form f : forms) add_group(f, l);
  } else {
    for (const Shape& s : shapes)
      for (Form f : forms) add_group(f, layer_for(f, s.m, s.n, s.k));
  }
  // Smallest first, so that a large case's time is estimated from the
  // rates the smaller ones reached (--max-dispatch-s).
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return groups[a][0].flops() < groups[b][0].flops(); });
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(info.handle, &props);

  std::printf("device   [%u] %s (%s)\n", info.index, info.name.c_str(), info.driver.c_str());
  std::printf("path     %s; fp16 runs the \"%s\" shader variant\n", vkamp::precision_path_name(ctx.path()),
              ctx.variant(vkamp::Format::F16).c_str());
  double peak_gflops = peer ? print_peer_info() : 0;
  std::fflush(stdout);

  GemmBench bench(ctx, repeats);
  Progress progress(groups.size());
  std::vector<Result> results;
  std::map<vkamp::Format, double> calibrated_gflops;
  std::mt19937 calibration_gen(1);
  for (size_t step = 0; step < order.size(); ++step) {
    const size_t gi = order[step];
    std::vector<Case> run;
    for (const Case& c : groups[gi]) {
      Result skip;
      skip.c = c;
      skip.group = gi;
      skip.skipped = cannot_run(c, props.limits, info.device_local_bytes);
      // The best rate this format has reached so far gives the most
      // optimistic estimate of this case's time.
      double best_gflops = 0;
      for (const Result& r : results)
        if (r.c.fmt == c.fmt && r.skipped.empty()) best_gflops = std::max(best_gflops, r.c.flops() / (r.ms * 1e6));
      constexpr uint32_t kCal = 512;
      if (skip.skipped.empty() && max_dispatch_s > 0 && c.flops() > 2.0 * kCal * kCal * kCal) {
        // Too big to just try, and the rates so far may all be of thin,
        // memory-bound shapes (8192x8192x1): time one 512^3 dispatch too.
        auto [it, fresh] = calibrated_gflops.try_emplace(c.fmt, 0.0);
        if (fresh) {
          const Case cal{Form::Forward, {kCal, kCal, kCal}, c.fmt};
          TimedCase t(ctx, cal, calibration_gen);
          t.timed_run();
          it->second = cal.flops() / (t.result(1).ms * 1e6);
        }
        best_gflops = std::max(best_gflops, it->second);
      }
      double est_ms = best_gflops > 0 ? c.flops() / (best_gflops * 1e6) : 0;
      if (skip.skipped.empty() && max_dispatch_s > 0 && est_ms > max_dispatch_s * 1e3) {
        char why[64];
        std::snprintf(why, sizeof why, "estimated %.1f s per dispatch", est_ms * 1e-3);
        skip.skipped = why;
      }
      if (skip.skipped.empty()) run.push_back(c);
      else results.push_back(skip);
    }
    if (run.empty()) continue;
    const Case& c = run.front();
    progress.step(step, std::string(form_name(c.form)) + " " + std::to_string(c.m()) + "x" + std::to_string(c.n()) +
                            "x" + std::to_string(c.k()));
    for (Result& r : bench.measure(run)) {
      // The peer runs right after vkamp's runs of the same shape, so that
      // both see the machine in about the same state.
      if (peer && r.c.fmt == vkamp::Format::F32) r.peer_ms = peer_ms(r.c);
      r.group = gi;
      results.push_back(r);
    }
  }
  progress.finish();
  // Table order: by group, then format.
  std::stable_sort(results.begin(), results.end(), [](const Result& a, const Result& b) {
    return std::make_tuple(a.group, int(a.c.fmt)) < std::make_tuple(b.group, int(b.c.fmt));
  });

  std::printf("timing   %s, median per dispatch of R dispatches x %s timed runs, after a warm-up run\n\n",
              bench.host_clock() ? "HOST CLOCK (no GPU timestamps on this device)" : "GPU timestamps",
              repeats ? std::to_string(repeats).c_str() : "N");
  std::printf("%-15s %5s %5s %5s  %-6s %10s %9s %9s %5s %4s", "form", "m", "n", "k", "format", "median ms",
              "GFLOP/s", "rate/fp32", "R", "N");
  if (peer) std::printf(" %6s %10s %9s %6s %10s", "%peak", "peer ms", "peer GF/s", "%peak", "vkamp/peer");
  std::printf("\n");
  const Result* fp32 = nullptr;
  bool skipped = false;
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    const Case& c = r.c;
    if (i > 0 && results[i - 1].group != r.group) std::printf("\n");
    if (!r.skipped.empty()) {
      std::printf("%-15s %5u %5u %5u  %-6s   skipped: %s\n", form_name(c.form), c.m(), c.n(), c.k(),
                  vkamp::format_name(c.fmt), r.skipped.c_str());
      skipped = true;
      continue;
    }
    if (c.fmt == vkamp::Format::F32) fp32 = &r;
    bool same = fp32 && fp32->c.form == c.form && fp32->c.m() == c.m() && fp32->c.n() == c.n() &&
                fp32->c.k() == c.k();
    char ratio[16] = "";
    if (same && c.fmt != vkamp::Format::F32) std::snprintf(ratio, sizeof ratio, "%.2fx", fp32->ms / r.ms);
    double gflops = c.flops() / (r.ms * 1e6);
    std::printf("%-15s %5u %5u %5u  %-6s %10.3f %9.2f %9s %5u %4d", form_name(c.form), c.m(), c.n(), c.k(),
                vkamp::format_name(c.fmt), r.ms, gflops, ratio, r.dispatches, r.runs);
    if (r.peer_ms > 0) {
      double peer_gflops = c.flops() / (r.peer_ms * 1e6);
      std::printf(" %5.1f%% %10.3f %9.2f %5.1f%% %10.3f", 100 * gflops / peak_gflops, r.peer_ms, peer_gflops,
                  100 * peer_gflops / peak_gflops, gflops / peer_gflops);
    }
    std::printf("\n");
  }
  std::printf("\nrate/fp32: this format's GFLOP/s over fp32's for the same form and shape (>1 is faster).\n"
              "R: dispatches recorded per run; N: timed runs.\n");
  if (peer)
    std::printf("peer: PyTorch torch.mm, fp32, on the CPU, median per call of R calls x 5 runs after a warm-up,\n"
                "timed right after vkamp's runs of the same shape; vkamp/peer: vkamp's GFLOP/s over the peer's\n"
                "(>1: vkamp is faster). %%peak: GFLOP/s over the CPU's fp32 peak above%s.\n",
                info.type == VK_PHYSICAL_DEVICE_TYPE_CPU ? "" : " (vkamp's runs on a GPU here: its %peak is not a CPU share)");
  if (skipped) std::printf("skipped cases: an estimated time runs with --max-dispatch-s 0 (or a larger limit).\n");
  return 0;
}

// Every flag of every benchmark, one table (app/flags.hpp); each
// benchmark's --help lists its own (Command::keys), and a flag of
// another benchmark is refused naming the one it belongs to.
struct BenchOptions {
  int repeats = 0;  // 0: automatic
  double max_dispatch_s = 1.0;
  bool quick = false, peer = false;
  std::vector<vkamp::Format> formats = {vkamp::Format::F32, vkamp::Format::F16, vkamp::Format::BF16};
  bool formats_given = false;
  std::vector<Form> forms = {Form::Forward, Form::BackwardInput, Form::BackwardWeight};
  std::vector<Shape> shapes;
  std::vector<std::string> sizes;  // generate: one (tiny); attention: a list (medium, gpt2)
  std::vector<std::string> tiles = {"device"};  // attention
  bool tune = false;          // gemm --tune
  double max_tune_s = 20;
};

using Row = vkamp::config::Setting<BenchOptions>;
using vkamp::ConfigError;
using vkamp::config::kGeneralGroup;

std::vector<Row> bench_rows() {
  const char* g = kGeneralGroup;
  Row repeats = vkamp::config::row<BenchOptions>("repeats", {g, "N", "timed runs per case, N >= 1"});
  repeats.parse = [](BenchOptions& o, const std::string& v, const std::string& l) {
    o.repeats = int(vkamp::config::parse_u32(v, l, 1));
  };
  repeats.show = [](const BenchOptions&) {
    return std::string(
        "gemm 5, or 3 where one dispatch takes over 0.25 s; conv and reduce 7; generate 5, 3 for medium; attention 5");
  };
  Row max_dispatch = vkamp::config::real<BenchOptions>(
      "max_dispatch_s", {g, "S", "gemm: skip cases estimated to take longer than S seconds per dispatch (0 runs every case)"},
      VKAMP_FIELD(max_dispatch_s), vkamp::config::Range::at_least(0));
  Row formats = vkamp::config::row<BenchOptions>("formats", {g, "LIST", "comma-separated storage formats from fp32,fp16,bf16,cb16"});
  formats.parse = [](BenchOptions& o, const std::string& v, const std::string& l) {
    o.formats.clear();
    o.formats_given = true;
    for (const std::string& item : split_list(v)) {
      auto f = vkamp::parse_format(item);
      if (!f) vkamp::config::fail(l, "unknown format '" + item + "'");
      o.formats.push_back(*f);
    }
  };
  formats.show = [](const BenchOptions&) { return std::string("fp32,fp16,bf16; attention fp16"); };
  Row forms = vkamp::config::row<BenchOptions>("forms", {g, "LIST", "gemm: comma-separated forms from forward,dx,dw"});
  forms.parse = [](BenchOptions& o, const std::string& v, const std::string& l) {
    o.forms.clear();
    for (const std::string& item : split_list(v)) {
      Form f = Form::Forward;
      if (item == "dx") f = Form::BackwardInput;
      else if (item == "dw") f = Form::BackwardWeight;
      else if (item != "forward") vkamp::config::fail(l, "unknown form '" + item + "' (forward, dx, dw)");
      if (std::find(o.forms.begin(), o.forms.end(), f) == o.forms.end()) o.forms.push_back(f);
    }
    std::sort(o.forms.begin(), o.forms.end());  // the table's order: forward, dX, dW
  };
  forms.show = [](const BenchOptions&) { return std::string("all"); };
  Row shape = vkamp::config::row<BenchOptions>(
      "shape", {g, "LIST", "gemm: comma-separated shapes MxNxK, each dimension 1 to 8192, instead of the default "
                           "shapes (repeatable; e.g. --shape 1024x1024x1024,4096x4096x4096)"});
  shape.parse = [](BenchOptions& o, const std::string& v, const std::string& l) {
    for (const std::string& item : split_list(v)) {
      auto sh = parse_shape(item);
      if (!sh)
        vkamp::config::fail(l, "takes MxNxK with each dimension a whole number from 1 to " +
                                   std::to_string(kMaxShapeDim) + ", got '" + item + "'");
      o.shapes.push_back(*sh);
    }
  };
  shape.aliases = {"shapes"};  // --shapes: the tuner's sweep takes a list
  Row size = vkamp::config::row<BenchOptions>(
      "size", {g, "S", "generate: tiny | medium; attention: a comma-separated list of charlm's sizes from tiny, "
                       "small, medium, gpt2"});
  size.parse = [](BenchOptions& o, const std::string& v, const std::string& l) {
    o.sizes.clear();
    for (const std::string& item : split_list(v)) {
      vkamp::app::LmOptions lm;  // charlm's table of sizes decides
      lm.size = item;
      try {
        vkamp::app::gpt_config(lm, 65);
      } catch (const ConfigError& e) {
        vkamp::config::fail(l, e.what());
      }
      o.sizes.push_back(item);
    }
  };
  size.show = [](const BenchOptions&) { return std::string("generate tiny; attention medium,gpt2"); };
  Row tiles = vkamp::config::row<BenchOptions>(
      "tiles", {g, "LIST", "attention: the fused paths' tile sizes to time, comma-separated, each RxT (rows a "
                           "workgroup x keys a tile, as VKAMP_ATTENTION_TILES), gpu, cpu or device"});
  tiles.parse = [](BenchOptions& o, const std::string& v, const std::string& l) {
    o.tiles.clear();
    for (const std::string& item : split_list(v)) {
      if (!vkamp::parse_dims(item) && item != "gpu" && item != "cpu" && item != "device")
        vkamp::config::fail(l, "takes RxT (e.g. 64x32), gpu, cpu or device, got '" + item + "'");
      o.tiles.push_back(item);
    }
  };
  tiles.show = [](const BenchOptions&) { return std::string("device"); };
  return {
      repeats, formats, max_dispatch,
      vkamp::config::toggle<BenchOptions>("quick", {g, "", "gemm: fewer, smaller shapes"}, VKAMP_FIELD(quick)),
      vkamp::config::toggle<BenchOptions>(
          "peer",
          {g, "", "gemm: also time each fp32 shape through PyTorch's torch.mm on the CPU (bench/gemm_peer.py), print "
                  "which BLAS it ran and the CPU's fp32 peak, and add columns: peer GFLOP/s, vkamp/peer, % of peak"},
          VKAMP_FIELD(peer)),
      forms, shape, size, tiles,
      vkamp::config::toggle<BenchOptions>(
          "tune",
          {g, "", "gemm: instead, the GEMM tuner's sweep (fp16): time every kernel the device fits per class of "
                  "product of the --shapes and --forms, print the table and write the winners to the per-device "
                  "cache ($XDG_CACHE_HOME or ~/.cache, vkamp/gemm-tune-*.txt)"},
          VKAMP_FIELD(tune)),
      vkamp::config::real<BenchOptions>("max_tune_s", {g, "S", "gemm --tune: at most S seconds of timing a class"},
                                        VKAMP_FIELD(max_tune_s), vkamp::config::Range::above(0)),
  };
}

struct Command {
  const char* name;
  const char* about;
  std::vector<std::string> keys;  // its flags
};

const std::vector<Command>& commands() {
  static const std::vector<Command> all = {
      {"gemm", kGemmHelp,
       {"device", "repeats", "formats", "max_dispatch_s", "quick", "peer", "forms", "shape", "tune",
        "max_tune_s"}},
      {"conv", vkamp::bench::kConvHelp, {"device", "repeats", "formats", "batch"}},
      {"reduce", vkamp::bench::kReduceHelp, {"device", "repeats", "formats", "batch"}},
      {"generate", vkamp::bench::kGenerateHelp, {"device", "repeats", "formats", "size"}},
      {"attention", vkamp::bench::kAttentionHelp, {"device", "repeats", "formats", "size", "tiles"}},
  };
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  namespace app = vkamp::app;
  // The benchmark is the first argument that names one; the rest are flags.
  std::string command;
  std::vector<char*> args{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const bool names_one = std::any_of(commands().begin(), commands().end(),
                                       [&](const Command& c) { return argv[i] == std::string(c.name); });
    if (names_one && command.empty()) command = argv[i];
    else args.push_back(argv[i]);
  }
  const Command* cmd = nullptr;
  for (const Command& c : commands())
    if (command == c.name) cmd = &c;

  BenchOptions opt;
  vkamp::app::RunOptions run;  // the shared rows: --device and --batch (conv, reduce)
  run.batch = 64;
  const BenchOptions opt_defaults = opt;
  const vkamp::app::RunOptions run_defaults = run;
  static const std::vector<Row> rows = bench_rows();
  std::vector<app::Flag> flags = app::shared_flags(run, run_defaults, {"device", "batch"});
  flags[1].help.front().meaning = "conv, reduce: the batch size (1 to 4096; reduce: sequences of 256)";
  flags[1].check = [&run] {
    if (run.batch > 4096) throw ConfigError("--batch needs a whole number from 1 to 4096, got " + std::to_string(run.batch));
  };
  for (app::Flag& f : app::bind_rows(rows, opt, opt_defaults)) flags.push_back(std::move(f));

  app::Program program{"vkamp-bench", "gemm|conv|reduce|generate|attention [flags]",
                       "Times vkamp's kernels on the GPU with timestamp queries; name the benchmark first.", false,
                       kCommands};
  if (cmd) {  // --help: the benchmark's own flags
    program.synopsis = std::string(cmd->name) + " [flags]";
    program.about = cmd->about;
    program.listed_keys = cmd->keys;
  }
  const int argn = int(args.size());
  int status = app::parse_or_exit(program, argn, args.data(), flags, [&](const app::ParsedFlags& parsed) {
    if (!cmd) throw ConfigError("no benchmark named (try 'vkamp-bench gemm'; there are: gemm, conv, reduce, generate, attention)");
    for (const auto& item : parsed.items)
      if (std::find(cmd->keys.begin(), cmd->keys.end(), item.flag->key) == cmd->keys.end()) {
        std::string owners;
        for (const Command& c : commands())
          if (std::find(c.keys.begin(), c.keys.end(), item.flag->key) != c.keys.end())
            owners += (owners.empty() ? "vkamp-bench " : " and vkamp-bench ") + std::string(c.name);
        throw ConfigError(item.label + " is an option of " + owners);
      }
    parsed.apply();
    if (opt.quick && !opt.shapes.empty()) throw ConfigError("--quick picks shapes: leave it out with --shape");
    if (opt.tune && (opt.peer || opt.quick || opt.formats_given))
      throw ConfigError("--tune times fp16 kernels: leave out --peer, --quick and --formats");
    if (command == "generate" && (opt.sizes.size() > 1 || (opt.sizes.size() == 1 && opt.sizes[0] != "tiny" &&
                                                           opt.sizes[0] != "medium")))
      throw ConfigError("vkamp-bench generate takes one --size: tiny or medium");
  });
  if (status >= 0) return status;
  if (opt.quick && !opt.formats_given) opt.formats = {vkamp::Format::F32, vkamp::Format::F16};

  try {
    if (command == "conv") return vkamp::bench::run_conv(run.device, opt.repeats, run.batch, opt.formats);
    if (command == "reduce") return vkamp::bench::run_reduce(run.device, opt.repeats, run.batch, opt.formats);
    if (command == "generate")
      return vkamp::bench::run_generate(run.device, opt.repeats, opt.sizes.empty() ? "tiny" : opt.sizes[0], opt.formats);
    if (command == "attention") {
      if (!opt.formats_given) opt.formats = {vkamp::Format::F16};
      if (opt.sizes.empty()) opt.sizes = {"medium", "gpt2"};
      return vkamp::bench::run_attention(run.device, opt.repeats, opt.sizes, opt.tiles, opt.formats);
    }
    if (opt.tune) {
      std::vector<std::array<uint32_t, 3>> dims;
      for (const Shape& sh : opt.shapes) dims.push_back({sh.m, sh.n, sh.k});
      std::vector<std::string> form_names;
      for (Form f : opt.forms) form_names.push_back(form_flag(f));
      return vkamp::bench::run_gemm_tune(run.device, dims, form_names, opt.max_tune_s);
    }
    return run_gemm(run.device, opt.repeats, opt.max_dispatch_s, opt.quick, opt.peer, opt.formats, opt.forms,
                    opt.shapes);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vkamp-bench: %s\n", e.what());
    return 1;
  }
}
