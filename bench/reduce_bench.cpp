// vkamp-bench reduce: the reductions over rows of a charlm-medium step,
// each op timed with GPU timestamps as the sum of its dispatches (first
// pass and the chunks' sum), and its GB/s from the bytes it must move.
// Method as `vkamp-bench conv`: a warm-up run, then the median of many
// timed copies, the cases' runs taken in turns.
#include "reduce_bench.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "timed_copies.hpp"
#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/ops/bias.hpp"
#include "vkamp/ops/embedding.hpp"
#include "vkamp/ops/layer_norm.hpp"
#include "vkamp/ops/reduce.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::bench {

const char* const kReduceHelp =
    "Times the reductions over rows of a charlm-medium training step (d 384,\n"
    "T 256, vocab 65; rows = batch * 256), each op as the sum of its dispatches:\n"
    "\n"
    "  bias_grad              384, 1152 and 1536 columns (the GPT's biases)\n"
    "  layer_norm_param_grad  384 columns (dgamma and dbeta)\n"
    "  embedding_grad         dwte (65 x 384) and dwpe (256 x 384)\n"
    "  sumsq                  rows * 65 values (an MSE over the logits)\n"
    "\n"
    "GB/s counts the bytes each op must read and write (inputs once, results\n"
    "once), not its fp32 partial sums. VKAMP_COLUMN_SUM=gpu|cpu picks the\n"
    "column sums' chunking (op_util.hpp column_sum_chunk_rows).\n";

namespace {

constexpr uint32_t kSeqLen = 256, kEmbd = 384, kVocab = 65;
// One op in one format: its operands and their timed copies.
class Case {
 public:
  Case(Context& ctx, std::string name, Format fmt, double bytes,
       const std::function<void(Case&, Sequence*)>& make)
      : name_(std::move(name)), fmt_(fmt), bytes_(bytes) {
    make(*this, nullptr);  // operands only
    timed_ = std::make_unique<TimedCopies>(ctx, std::vector<TimedCopies::Part>{[this, make](Sequence& s) {
      make(*this, &s);
    }});
  }
  // Operands, in the order at() numbers them.
  Buffer& add(Buffer b) {
    buffers_.push_back(std::make_unique<Buffer>(std::move(b)));
    return *buffers_.back();
  }
  Buffer& buf(Context& ctx, size_t n, std::mt19937& gen) { return add(random_buffer(ctx, fmt_, n, gen)); }
  Buffer& at(size_t i) { return *buffers_.at(i); }
  void timed_run() { timed_->timed_run(); }
  const std::string& name() const { return name_; }
  Format fmt() const { return fmt_; }
  double bytes() const { return bytes_; }
  double median_ms() const { return timed_->median_ms(0); }
  uint32_t reps() const { return timed_->copies(); }

 private:
  std::string name_;
  Format fmt_;
  double bytes_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::unique_ptr<TimedCopies> timed_;
};

}  // namespace

int run_reduce(const std::string& device, int repeats, uint32_t batch, std::vector<Format> formats) {
  Context ctx(bench_context_options(device));
  const auto& info = ctx.info();
  if (repeats == 0) repeats = 7;
  const uint32_t rows = batch * kSeqLen;
  std::printf("device   [%u] %s (%s)\n", info.index, info.name.c_str(), info.driver.c_str());
  std::printf("shapes   charlm medium: %u rows (batch %u x T %u), d %u, vocab %u\n", rows, batch, kSeqLen, kEmbd,
              kVocab);
  std::fflush(stdout);

  std::mt19937 gen(12345);
  std::vector<std::unique_ptr<Case>> cases;
  for (Format f : formats) {
    const double eb = double(format_bytes(f));
    for (uint32_t cols : {kEmbd, 3 * kEmbd, 4 * kEmbd})
      cases.push_back(std::make_unique<Case>(ctx, "bias_grad " + std::to_string(cols), f,
                                             eb * (double(rows) * cols + cols), [&, cols](Case& c, Sequence* s) {
        if (!s) {
          c.buf(ctx, size_t(rows) * cols, gen), c.buf(ctx, cols, gen);
          return;
        }
        ops::bias_add_backward(*s, c.fmt(), c.at(0), c.at(1), rows, cols);
      }));
    cases.push_back(std::make_unique<Case>(ctx, "layer_norm_param_grad 384", f,
                                           eb * (2.0 * rows * kEmbd + 2 * kEmbd) + 8.0 * rows,
                                           [&](Case& c, Sequence* s) {
      const size_t n = size_t(rows) * kEmbd;
      if (!s) {
        for (size_t e : {n, n, size_t(kEmbd), size_t(kEmbd)}) c.buf(ctx, e, gen);
        c.add(Buffer(ctx, size_t(rows) * 8)).fill(0x3F800000u);  // mean, rstd: 1, 1
        return;
      }
      ops::layer_norm_backward_params(*s, c.fmt(), c.at(0), c.at(4), c.at(1), c.at(2), c.at(3), rows, kEmbd, false,
                                      false);
    }));
    cases.push_back(std::make_unique<Case>(ctx, "embedding_grad", f,
                                           eb * (double(rows) * kEmbd + (kVocab + kSeqLen) * kEmbd) + 4.0 * rows,
                                           [&](Case& c, Sequence* s) {
      if (!s) {
        for (uint32_t keys : {rows, kVocab, kSeqLen}) c.buf(ctx, size_t(keys) * kEmbd, gen);
        std::vector<uint32_t> ids(rows);
        for (uint32_t& id : ids) id = gen() % kVocab;
        c.add(Buffer(ctx, ids.size() * 4)).write(ids);
        return;
      }
      ops::embedding_backward(*s, c.fmt(), c.at(3), c.at(0), c.at(1), BufferView(c.at(2)), rows, kSeqLen, kEmbd, kVocab);
    }));
    const uint32_t n = rows * kVocab;
    cases.push_back(std::make_unique<Case>(ctx, "sumsq " + std::to_string(n), f, eb * n,
                                           [&, n](Case& c, Sequence* s) {
      if (!s) {
        c.buf(ctx, n, gen);
        c.add(Buffer(ctx, ops::reduce_scratch_bytes(n)));
        c.add(Buffer(ctx, 4));  // the fp32 sum
        return;
      }
      ops::sum_squares(*s, c.fmt(), c.at(0), nullptr, n, c.at(1), c.at(2));
    }));
  }
  for (int i = 0; i < repeats; ++i)
    for (auto& c : cases) c->timed_run();

  std::printf("timing   GPU timestamps, median per op of R copies x %d timed runs, after a warm-up run\n\n", repeats);
  std::printf("%-26s %-6s %10s %9s %8s %4s\n", "op", "format", "median ms", "MB", "GB/s", "R");
  for (auto& c : cases)
    std::printf("%-26s %-6s %10.3f %9.2f %8.1f %4u\n", c->name().c_str(), format_name(c->fmt()), c->median_ms(),
                c->bytes() / 1e6, c->bytes() / (c->median_ms() * 1e6), c->reps());
  return 0;
}

}  // namespace vkamp::bench
