// vkamp-bench quant: a frozen linear layer's forward Y = X W^T and input
// gradient dX = dY W with W in the run's 16-bit format against W in ggml
// blocks (gemm.comp's ".quant" build, Gemm::b_blocks), timed on the GPU in
// turns, with each block type's time over the 16-bit one's and the bytes W
// takes (issue 53: what holding the base in blocks costs in speed, and
// saves in memory).
#include "quant_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "vkamp/buffer.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/context.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/kernel_paths.hpp"
#include "vkamp/quant/quantize.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::bench {

const char* const kQuantHelp =
    "Times a frozen linear layer's two products, the forward Y = X W^T and the\n"
    "input gradient dX = dY W (X: tokens x in, W: out x in), with W held in the\n"
    "run's format (--formats, first entry; default fp16) against W in ggml blocks\n"
    "(--types, default q8_0,q4_0,q4_k,q6_k), which the GEMM dequantizes as it\n"
    "loads them. X and dY stay in the run's format; every product accumulates\n"
    "in fp32.\n"
    "\n"
    "Layers (--layer TOKENSxINxOUT, repeatable): by default Llama's at 512 tokens\n"
    "and hidden 2048 (TinyLlama's width): 512x2048x2048 (q_proj, o_proj),\n"
    "512x2048x5632 (gate, up) and 512x5632x2048 (down). --quick: 128x512x512 and\n"
    "128x512x1536.\n"
    "\n"
    "Each case records the product R times in one sequence (R chosen so that a\n"
    "run takes about 20 ms, at most 64), runs it once to warm up, then N more\n"
    "times (--repeats; 5, or 3 where one product takes over 0.25 s); the W\n"
    "formats of one layer and form take turns run by run, so a change in the\n"
    "machine's load shifts them alike. Times are GPU timestamps (the host clock\n"
    "where the device has none). time/16-bit: the case's median time over W in\n"
    "the run's format (below 1: the blocks are faster). MiB and bits/weight:\n"
    "what W takes in device memory.\n"
    "\n"
    "--paths SPEC (repeatable): time every case on each kernel path, a context of\n"
    "its own (as vkamp-bench gemm --paths), in turns with the others: the blocks'\n"
    "speed choices are the GEMM's kernel-path variables, e.g. --paths default\n"
    "--paths GEMM_TILED=1 --paths GEMM_BLOCK=8x8. time/16-bit is then over W in\n"
    "the run's format on the first path, and each layer, form and W ends with\n"
    "the fastest path.\n"
    "\n"
    "--tune: instead, the GEMM tuner's sweep (as vkamp-bench gemm --tune): per\n"
    "class of the layers' products (sizes, transposes and W's block type), time\n"
    "every path of the blocks' GEMM (shared-memory tiles; direct loads at 16x8,\n"
    "8x16, 8x8 and 4x4 outputs a thread), print them, and write the fastest to\n"
    "the per-device cache that every later run on this device reads.\n";

namespace {

constexpr double kTargetRunMs = 20;
constexpr uint32_t kMaxDispatches = 64;
constexpr double kSlowMs = 250;

// W as the layer holds it: the run's format, or ggml blocks of W's values
// (uniform in [-1, 1) as random_buffer draws them, quantized by vkamp's
// quantizer, which writes ggml's reference blocks byte for byte).
struct Weight {
  std::optional<quant::GgmlType> blocks;  // none: the run's format
  std::unique_ptr<Buffer> buffer;
  uint64_t bytes = 0;  // W's own, without the buffer's word padding
};

Weight make_weight(Context& ctx, Format fmt, std::optional<quant::GgmlType> t, const LinearShape& l,
                   std::mt19937& gen) {
  const size_t n = size_t(l.out) * l.in;
  Weight w;
  w.blocks = t;
  if (!t) {
    w.buffer = std::make_unique<Buffer>(random_buffer(ctx, fmt, n, gen));
    w.bytes = n * format_bytes(fmt);
    return w;
  }
  w.buffer = std::make_unique<Buffer>(random_blocks(ctx, *t, n, gen));
  w.bytes = quant::ggml_row_bytes(*t, n);
  return w;
}

std::string weight_name(Format fmt, const Weight& w) {
  return w.blocks ? quant::ggml_type_info(*w.blocks).name : format_name(fmt);
}

// One product of one layer with one W, recorded R times, and its timed runs.
class TimedProduct {
 public:
  TimedProduct(Context& ctx, Format fmt, bool forward, const LinearShape& l, const Weight& w, const Buffer& in,
               const Buffer& out)
      : fmt_(fmt), forward_(forward), l_(l), w_(w), in_(in), out_(out), seq_(ctx, /*timestamps=*/true, 4 * kMaxDispatches) {
    std::vector<double> probe;
    record(1);
    run(probe);  // builds the pipeline and warms up
    run(probe);
    probe_ms_ = probe.back();
    const uint32_t r = uint32_t(std::clamp(kTargetRunMs / std::max(probe_ms_, 1e-6), 1.0, double(kMaxDispatches)));
    if (r > 1) {
      record(r);
      run(probe);
    }
  }
  double probe_ms() const { return probe_ms_; }
  void timed_run() { run(times_); }
  double median_ms() const { return median(times_); }
  bool host_clock() const { return host_clock_; }

 private:
  void record(uint32_t r) {
    seq_.begin();
    for (uint32_t i = 0; i < r; ++i) {
      if (forward_) ops::linear_forward(seq_, fmt_, in_, *w_.buffer, out_, l_.tokens, l_.in, l_.out, {}, w_.blocks);
      else ops::linear_backward_input(seq_, fmt_, in_, *w_.buffer, out_, l_.tokens, l_.in, l_.out, false, {}, w_.blocks);
    }
    seq_.end();
    recorded_ = r;
  }
  // One product's time in this run: the GPU's, or the host clock's share.
  void run(std::vector<double>& times) {
    const auto t0 = std::chrono::steady_clock::now();
    seq_.run();
    const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const bool gpu = !seq_.timings().empty();
    host_clock_ = host_clock_ || !gpu;
    times.push_back((gpu ? seq_.gpu_ms() : wall) / recorded_);
  }

  Format fmt_;
  bool forward_;
  LinearShape l_;
  const Weight& w_;
  const Buffer& in_;
  const Buffer& out_;
  Sequence seq_;
  uint32_t recorded_ = 0;
  double probe_ms_ = 0;
  bool host_clock_ = false;
  std::vector<double> times_;
};

}  // namespace

std::vector<LinearShape> quant_layers(std::vector<LinearShape> layers, bool quick,
                                      const std::vector<quant::GgmlType>& types) {
  if (layers.empty())
    layers = quick ? std::vector<LinearShape>{{128, 512, 512}, {128, 512, 1536}}
                   : std::vector<LinearShape>{{512, 2048, 2048}, {512, 2048, 5632}, {512, 5632, 2048}};
  for (const LinearShape& l : layers)
    for (quant::GgmlType t : types)
      if (l.in % quant::ggml_type_info(t).block_values != 0)
        throw ConfigError("a row of " + std::to_string(l.in) + " values is not whole " +
                          quant::ggml_type_info(t).name + " blocks of " +
                          std::to_string(quant::ggml_type_info(t).block_values));
  return layers;
}

int run_quant(const std::string& device, int repeats, Format fmt, const std::vector<quant::GgmlType>& types,
              const std::vector<std::string>& forms, std::vector<LinearShape> layers, bool quick,
              std::vector<std::string> paths) {
  layers = quant_layers(std::move(layers), quick, types);
  // A context per kernel path, all on the one device.
  if (paths.empty()) paths = {"default"};
  std::vector<std::unique_ptr<Context>> contexts;
  for (const std::string& p : paths) {
    ContextOptions opt = bench_context_options(device);
    opt.paths = kernel_paths_from_settings(p);
    contexts.push_back(std::make_unique<Context>(opt));
  }
  const bool by_path = paths.size() > 1;
  const DeviceInfo& info = contexts[0]->info();
  std::printf("device   [%u] %s (%s)\n", info.index, info.name.c_str(), info.driver.c_str());
  for (size_t p = 0; p < paths.size() && by_path; ++p) std::printf("path %zu   %s\n", p, paths[p].c_str());
  std::printf("format   %s activations, fp32 accumulation; W in %s or in blocks\n\n", format_name(fmt),
              format_name(fmt));
  std::printf("%-22s %-8s %-6s %4s %8s %6s %10s %9s %11s %5s\n", "layer (tokens x in x out)", "form", "W", "path",
              "MiB", "bits", "ms", "GFLOP/s", "time/16-bit", "runs");
  bool host_clock = false;
  std::vector<std::optional<quant::GgmlType>> kinds{std::nullopt};
  kinds.insert(kinds.end(), types.begin(), types.end());
  for (const LinearShape& l : layers) {
    // Each path's context holds its own copy of the same operands.
    struct Operands {
      std::vector<Weight> weights;  // by kind
      std::unique_ptr<Buffer> x, dy, y, dx;
    };
    std::vector<Operands> ops_by_path;
    for (auto& ctx : contexts) {
      std::mt19937 gen(20261206);
      Operands o;
      for (const auto& k : kinds) o.weights.push_back(make_weight(*ctx, fmt, k, l, gen));
      o.x = std::make_unique<Buffer>(random_buffer(*ctx, fmt, size_t(l.tokens) * l.in, gen));
      o.dy = std::make_unique<Buffer>(random_buffer(*ctx, fmt, size_t(l.tokens) * l.out, gen));
      o.y = std::make_unique<Buffer>(*ctx, size_t(l.tokens) * l.out * format_bytes(fmt));
      o.dx = std::make_unique<Buffer>(*ctx, size_t(l.tokens) * l.in * format_bytes(fmt));
      ops_by_path.push_back(std::move(o));
    }
    char shape[40];
    std::snprintf(shape, sizeof shape, "%u x %u x %u", l.tokens, l.in, l.out);
    for (const std::string& form : forms) {
      const bool forward = form == "forward";
      // timed[kind * paths + path]
      std::vector<std::unique_ptr<TimedProduct>> timed;
      double slowest = 0;
      for (size_t k = 0; k < kinds.size(); ++k)
        for (size_t p = 0; p < contexts.size(); ++p) {
          const Operands& o = ops_by_path[p];
          timed.push_back(std::make_unique<TimedProduct>(*contexts[p], fmt, forward, l, o.weights[k],
                                                         forward ? *o.x : *o.dy, forward ? *o.y : *o.dx));
          slowest = std::max(slowest, timed.back()->probe_ms());
        }
      const int runs = repeats ? repeats : slowest > kSlowMs ? 3 : 5;
      for (int i = 0; i < runs; ++i)
        for (auto& t : timed) t->timed_run();  // in turns
      const double base_ms = timed[0]->median_ms();
      const double flops = 2.0 * l.tokens * l.in * l.out;
      for (size_t k = 0; k < kinds.size(); ++k) {
        const Weight& w = ops_by_path[0].weights[k];
        size_t fastest = 0;
        for (size_t p = 0; p < contexts.size(); ++p) {
          const TimedProduct& t = *timed[k * contexts.size() + p];
          const double ms = t.median_ms();
          host_clock = host_clock || t.host_clock();
          if (ms < timed[k * contexts.size() + fastest]->median_ms()) fastest = p;
          const bool first = k == 0 && p == 0;
          std::printf("%-22s %-8s %-6s %4zu %8.2f %6.2f %10.3f %9.2f %10.2fx %5d\n", first ? shape : "",
                      first ? (forward ? "Y=XW^T" : "dX=dYW") : "", p == 0 ? weight_name(fmt, w).c_str() : "", p,
                      double(w.bytes) / (1 << 20), 8.0 * double(w.bytes) / (double(l.in) * l.out), ms,
                      flops / (ms * 1e6), ms / base_ms, runs);
        }
        if (by_path) std::printf("%-22s %-8s %-6s fastest: path %zu (%s)\n", "", "", "", fastest, paths[fastest].c_str());
      }
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  std::printf("timing   %s, median per product over the timed runs, the W formats in turns\n",
              host_clock ? "host clock (no GPU timestamps on this device)" : "GPU timestamps");
  return 0;
}

}  // namespace vkamp::bench
