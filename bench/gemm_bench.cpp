// vkamp-bench gemm: the three GEMMs of a linear layer in training, timed
// on the GPU with timestamp queries, per storage format and kernel path,
// with GFLOP/s and each case's rate against fp32 (or the first path). The
// method is docs/design.md, "How performance is measured": warm up, then the
// median of many timed dispatches. --peer adds PyTorch's fp32 GEMM
// (bench/gemm_peer.py) on the CPU, shape by shape in the same run.
#include "gemm_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "bench_util.hpp"
#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/kernel_paths.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/sequence.hpp"
#include "vkamp/platform.hpp"
#include "vkamp/platform/process.hpp"

namespace vkamp::bench {

const char* const kGemmHelp =
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
    "--paths SPEC (repeatable): time each case on each kernel path, a context of\n"
    "its own (KernelPaths), in the same turns; rate/p0 then compares each path\n"
    "with the first. SPEC is NAME=value pairs of the kernel-path variables,\n"
    "e.g. --paths default --paths GEMM_TILED=0,GEMM_LOADS=storage.\n"
    "\n"
    "--tune: instead, the GEMM tuner's sweep (fp16): per class of product\n"
    "(transposes and a size bucket of m, n, k; ops/gemm_kernel.hpp) in the --forms\n"
    "of the --shapes (default: charlm medium's and the MLP's layers, square\n"
    "1024-8192), times every kernel the device fits, the shader GEMM and each\n"
    "tensor-core shape, prints the table, and writes the winners to the\n"
    "per-device cache every later run reads ($XDG_CACHE_HOME or ~/.cache,\n"
    "vkamp/gemm-tune-*.txt; VKAMP_GEMM_TUNE).\n";

const char* form_flag(GemmForm f) {
  return f == GemmForm::Forward ? "forward" : f == GemmForm::BackwardInput ? "dx" : "dw";
}

std::optional<GemmShape> parse_shape(const std::string& text, uint32_t max) {
  uint32_t d[3];
  size_t p = 0;
  for (int i = 0; i < 3; ++i) {
    size_t q = i < 2 ? text.find_first_of("xX", p) : text.size();
    if (q == std::string::npos || q == p || q - p > 5) return std::nullopt;
    std::string digits = text.substr(p, q - p);
    if (digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    unsigned long v = std::stoul(digits);
    if (v < 1 || v > max) return std::nullopt;
    d[i] = uint32_t(v);
    p = q + 1;
  }
  return GemmShape{d[0], d[1], d[2]};
}

namespace {

constexpr double kTargetRunMs = 20;  // per timed run, to choose R
constexpr uint32_t kMaxDispatches = 256;
constexpr double kSlowDispatchMs = 250;  // fewer default repeats above this

const char* form_name(GemmForm f) {
  switch (f) {
    case GemmForm::Forward: return "forward X*W^T";
    case GemmForm::BackwardInput: return "dX = dY*W";
    case GemmForm::BackwardWeight: return "dW = dY^T*X";
  }
  return "?";
}

struct Layer {
  uint32_t batch, in, out;
};

// The layer whose GEMM in form f is m x n, summing k products.
Layer layer_for(GemmForm f, uint32_t m, uint32_t n, uint32_t k) {
  switch (f) {
    case GemmForm::Forward: return {m, k, n};
    case GemmForm::BackwardInput: return {m, n, k};
    case GemmForm::BackwardWeight: return {k, n, m};
  }
  return {};
}

struct Case {
  GemmForm form;
  Layer layer;
  vkamp::Format fmt;
  size_t path = 0;  // which of --paths (a context of its own)
  // The GEMM's output is m x n and each output sums k products.
  uint32_t m() const { return form == GemmForm::BackwardWeight ? layer.out : layer.batch; }
  uint32_t n() const { return form == GemmForm::Forward ? layer.out : layer.in; }
  uint32_t k() const {
    return form == GemmForm::Forward ? layer.in : form == GemmForm::BackwardInput ? layer.out : layer.batch;
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
        case GemmForm::Forward: vkamp::ops::linear_forward(seq_, c_.fmt, x_, w_, out_, l.batch, l.in, l.out); break;
        case GemmForm::BackwardInput:
          vkamp::ops::linear_backward_input(seq_, c_.fmt, dy_, w_, out_, l.batch, l.in, l.out);
          break;
        case GemmForm::BackwardWeight:
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
  // repeats 0: 5 runs, or 3 where a dispatch is slow. contexts: one per path.
  GemmBench(const std::vector<std::unique_ptr<vkamp::Context>>& contexts, int repeats)
      : contexts_(contexts), repeats_(repeats) {}

  // Cases of one form and shape in different formats and paths, timed in
  // turns (run i of every case before run i+1 of any) so that a change in
  // the machine's load while they run shifts all of them alike and their
  // ratio holds.
  std::vector<Result> measure(const std::vector<Case>& cases) {
    std::vector<std::unique_ptr<TimedCase>> timed;
    double slowest = 0;
    for (const Case& c : cases) {
      timed.push_back(std::make_unique<TimedCase>(*contexts_[c.path], c, gen_));
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
  const std::vector<std::unique_ptr<vkamp::Context>>& contexts_;
  int repeats_;
  std::mt19937 gen_{12345};
  bool host_clock_ = false;
};

// Progress on stderr, shown only once the run has taken a couple of seconds:
// one line rewritten in place on a terminal, a line per step otherwise.
class Progress {
 public:
  explicit Progress(size_t total) : total_(total), tty_(vkamp::platform::is_terminal(stderr)) {}
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
// the system's Python (Debian's, the one that has python3-torch).
#ifndef VKAMP_BENCH_SOURCE_DIR
#define VKAMP_BENCH_SOURCE_DIR "bench"
#endif
// A peer script's standard output (its stderr goes to ours), or an
// exception if it fails.
std::string run_peer(std::vector<std::string> args) {
  vkamp::platform::ChildSpec spec;
  spec.argv = {vkamp::platform::python_interpreter()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.stderr_to_parent = true;
  const vkamp::platform::ChildOutcome r = vkamp::platform::run_process(spec);
  std::string cmd;
  for (const std::string& a : spec.argv) cmd += (cmd.empty() ? "" : " ") + a;
  if (r.status != 0) throw std::runtime_error("failed (exit status " + std::to_string(r.status) + "): " + cmd);
  return r.output;
}

// Prints the peer's BLAS/threads line and the peak arithmetic; returns the
// peak in GFLOP/s.
double print_peer_info() {
  std::istringstream in(run_peer({VKAMP_BENCH_SOURCE_DIR "/peer_info.py"}));
  double peak = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("peak_gflops=", 0) == 0) peak = std::stod(line.substr(12));
    else std::printf("%s\n", line.c_str());
  }
  return peak;
}

// PyTorch's median ms per call for one form and shape in fp32.
double peer_ms(const Case& c) {
  std::string out = run_peer({VKAMP_BENCH_SOURCE_DIR "/gemm_peer.py", "--form", form_flag(c.form), "--batch",
                             std::to_string(c.layer.batch), "--in", std::to_string(c.layer.in), "--out",
                             std::to_string(c.layer.out)});
  size_t at = out.find("ms=");
  if (at == std::string::npos) throw std::runtime_error("gemm_peer.py printed no time: " + out);
  return std::stod(out.substr(at + 3));
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

}  // namespace

int run_gemm(const std::string& device, int repeats, double max_dispatch_s, bool quick, bool peer,
             std::vector<vkamp::Format> formats, const std::vector<GemmForm>& forms, const std::vector<GemmShape>& shapes,
             std::vector<std::string> paths) {
  // A context per kernel path, all on the one device.
  if (paths.empty()) paths = {"default"};
  std::vector<std::unique_ptr<vkamp::Context>> contexts;
  for (const std::string& p : paths) {
    vkamp::ContextOptions opt = vkamp::bench::bench_context_options(device);
    opt.paths = vkamp::kernel_paths_from_settings(p);
    contexts.push_back(std::make_unique<vkamp::Context>(opt));
  }
  vkamp::Context& ctx = *contexts[0];
  const auto& info = ctx.info();

  std::vector<Layer> layers;
  if (quick) layers = {{128, 784, 256}, {128, 256, 10}, {512, 512, 512}};
  else layers = {{128, 784, 256}, {128, 256, 256}, {128, 256, 10}, {512, 512, 512}, {1024, 1024, 1024}};
  std::sort(formats.begin(), formats.end());  // fp32 first: the other rows compare with it
  formats.erase(std::unique(formats.begin(), formats.end()), formats.end());

  // Groups of cases of one form and shape, one case per format, in the
  // table's order: a preset layer in each form, or a --shape's m, n, k.
  std::vector<std::vector<Case>> groups;
  auto add_group = [&](GemmForm f, const Layer& l) {
    groups.emplace_back();
    for (size_t p = 0; p < paths.size(); ++p)
      for (vkamp::Format fmt : formats) groups.back().push_back({f, l, fmt, p});
  };
  if (shapes.empty()) {
    for (const Layer& l : layers)
      for (GemmForm f : forms) add_group(f, l);
  } else {
    for (const GemmShape& s : shapes)
      for (GemmForm f : forms) add_group(f, layer_for(f, s.m, s.n, s.k));
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
  for (size_t p = 0; p < paths.size() && paths.size() > 1; ++p)
    std::printf("path %zu   %s\n", p, paths[p].c_str());
  double peak_gflops = peer ? print_peer_info() : 0;
  std::fflush(stdout);

  GemmBench bench(contexts, repeats);
  Progress progress(groups.size());
  std::vector<Result> results;
  std::map<std::pair<vkamp::Format, size_t>, double> calibrated_gflops;
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
        if (r.c.fmt == c.fmt && r.c.path == c.path && r.skipped.empty()) best_gflops = std::max(best_gflops, r.c.flops() / (r.ms * 1e6));
      constexpr uint32_t kCal = 512;
      if (skip.skipped.empty() && max_dispatch_s > 0 && c.flops() > 2.0 * kCal * kCal * kCal) {
        // Too big to just try, and the rates so far may all be of thin,
        // memory-bound shapes (8192x8192x1): time one 512^3 dispatch too.
        auto [it, fresh] = calibrated_gflops.try_emplace({c.fmt, c.path}, 0.0);
        if (fresh) {
          const Case cal{GemmForm::Forward, {kCal, kCal, kCal}, c.fmt, c.path};
          TimedCase t(*contexts[c.path], cal, calibration_gen);
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
      if (peer && r.c.fmt == vkamp::Format::F32 && r.c.path == 0) r.peer_ms = peer_ms(r.c);
      r.group = gi;
      results.push_back(r);
    }
  }
  progress.finish();
  // Table order: by group, then path, then format.
  std::stable_sort(results.begin(), results.end(), [](const Result& a, const Result& b) {
    return std::make_tuple(a.group, a.c.path, int(a.c.fmt)) < std::make_tuple(b.group, b.c.path, int(b.c.fmt));
  });
  const bool by_path = paths.size() > 1;

  std::printf("timing   %s, median per dispatch of R dispatches x %s timed runs, after a warm-up run\n\n",
              bench.host_clock() ? "HOST CLOCK (no GPU timestamps on this device)" : "GPU timestamps",
              repeats ? std::to_string(repeats).c_str() : "N");
  std::printf("%-15s %5s %5s %5s %s %-6s %10s %9s %9s %5s %4s", "form", "m", "n", "k", by_path ? "path" : "",
              "format", "median ms", "GFLOP/s", by_path ? "rate/p0" : "rate/fp32", "R", "N");
  if (peer) std::printf(" %6s %10s %9s %6s %10s", "%peak", "peer ms", "peer GF/s", "%peak", "vkamp/peer");
  std::printf("\n");
  bool skipped = false;
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    const Case& c = r.c;
    if (i > 0 && results[i - 1].group != r.group) std::printf("\n");
    if (!r.skipped.empty()) {
      std::printf("%-15s %5u %5u %5u %s %-6s   skipped: %s\n", form_name(c.form), c.m(), c.n(), c.k(),
                  by_path ? std::to_string(c.path).c_str() : "", vkamp::format_name(c.fmt), r.skipped.c_str());
      skipped = true;
      continue;
    }
    // The row it is compared with: fp32 of the same path, or (by path) the
    // same format on the first path.
    const Result* base = nullptr;
    for (const Result& o : results)
      if (o.group == r.group && o.skipped.empty() && &o != &r &&
          (by_path ? o.c.path == 0 && o.c.fmt == c.fmt : o.c.path == c.path && o.c.fmt == vkamp::Format::F32))
        base = &o;
    char ratio[16] = "";
    if (base) std::snprintf(ratio, sizeof ratio, "%.2fx", base->ms / r.ms);
    double gflops = c.flops() / (r.ms * 1e6);
    std::printf("%-15s %5u %5u %5u %s %-6s %10.3f %9.2f %9s %5u %4d", form_name(c.form), c.m(), c.n(), c.k(),
                by_path ? std::to_string(c.path).c_str() : "", vkamp::format_name(c.fmt), r.ms, gflops, ratio,
                r.dispatches, r.runs);
    if (r.peer_ms > 0) {
      double peer_gflops = c.flops() / (r.peer_ms * 1e6);
      std::printf(" %5.1f%% %10.3f %9.2f %5.1f%% %10.3f", 100 * gflops / peak_gflops, r.peer_ms, peer_gflops,
                  100 * peer_gflops / peak_gflops, gflops / peer_gflops);
    }
    std::printf("\n");
  }
  std::printf(by_path ? "\nrate/p0: this path's GFLOP/s over path 0's for the same format, form and shape (>1 is "
                       "faster).\n"
                     : "\nrate/fp32: this format's GFLOP/s over fp32's for the same form and shape (>1 is faster).\n");
  std::printf("R: dispatches recorded per run; N: timed runs.\n");
  if (peer)
    std::printf("peer: PyTorch torch.mm, fp32, on the CPU, median per call of R calls x 5 runs after a warm-up,\n"
                "timed right after vkamp's runs of the same shape; vkamp/peer: vkamp's GFLOP/s over the peer's\n"
                "(>1: vkamp is faster). %%peak: GFLOP/s over the CPU's fp32 peak above%s.\n",
                info.type == VK_PHYSICAL_DEVICE_TYPE_CPU ? "" : " (vkamp's runs on a GPU here: its %peak is not a CPU share)");
  if (skipped) std::printf("skipped cases: an estimated time runs with --max-dispatch-s 0 (or a larger limit).\n");
  return 0;
}

}  // namespace vkamp::bench
