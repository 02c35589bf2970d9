// What an op is to the graph: how it checks its inputs and infers its
// output shape, how it records its forward and its backward, and which
// scratch memory it needs. Each op lives in one file under
// engine/src/graph/ops/ and is registered by its line in ops.cmake.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/graph/graph.hpp"
#include "vkamp/ops/grad_write.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::graph {

// Training normalises with the batch's statistics (and may stage state for
// the update pass's commit); Eval with the running statistics (Evaluator,
// predict). Ops without such state behave alike in both.
enum class ForwardMode { Training, Eval };

// --sync-bn: what the host does with a node's state at a sync point
// (OpRun::sync). BatchStatistics: a {mean[c], biased var[c]} block becomes
// the statistics of every rank's rows together; ColumnSums: per-column sums
// become their mean over the ranks (the sum over all rows / ranks).
enum class HostSync { BatchStatistics, ColumnSums };

// Where an op's counter-based random numbers come from (dropout): the
// run's seed, the GPU word holding the step number (TrainState.step in a
// training step, which a checkpoint keeps), and the rank, so that each
// micro-batch of each rank draws its own.
struct RandomSource {
  uint64_t seed = 0;
  const Buffer* counter = nullptr;  // nullptr: a zero the executor keeps (step 0)
  uint32_t counter_word = 0;
  uint32_t rank = 0;
};

// The shapes an op sees when the graph is built: its inputs (parameters
// with their dims) and attributes.
struct OpShapes {
  const Node& node;
  std::vector<const Tensor*> in;
  Shape out;  // filled by infer; read by the scratch sizes
  std::vector<bool> grads;  // per input: whether its gradient is wanted (empty while building)
  Format fmt = Format::F32;  // the storage format (set by the executor; unknown while building)
  // Per input: the format it is stored in (set by the executor). Equal to
  // fmt for every op but a cast, which converts between the two.
  std::vector<Format> in_fmts;
  // --amp-level O3 (set by the executor): normalisation ops round their
  // parameters and batch statistics to fmt instead of keeping them in fp32.
  bool norm_in_16_bits = false;
  // The device (set by the executor; null while building): for ops whose
  // kernel, and so whose scratch, depends on it (attention's path).
  const Context* ctx = nullptr;
};

// Where an input's gradient goes: overwrite it, or add to it because
// another consumer (or an earlier micro-batch, for parameters) already
// wrote part of the sum.
struct GradTarget {
  BufferView view;
  bool accumulate = false;
  // The gradient is this node's dout, in the same buffer (the executor's
  // home for a sum's inputs, executor_grad_alias.cpp): it already holds the
  // contribution dY, and nothing needs writing.
  bool holds_dout = false;
};

// One node's buffers while a step is recorded (implemented by Executor).
class OpRun {
 public:
  virtual ~OpRun() = default;
  Sequence& seq;
  Format fmt;
  uint32_t rows;
  const OpShapes& shapes;

  ForwardMode mode = ForwardMode::Training;
  // The step's micro-batch being recorded (forward, and the backward that
  // follows it) and how many a step has.
  uint32_t micro_batch = 0, micro_batches = 1;
  // --sync-bn under MPI: the ranks whose rows the batch statistics cover
  // (1: this rank's rows only, and sync() is never called).
  uint32_t synced_ranks = 1;

  OpRun(Sequence& s, Format f, uint32_t r, const OpShapes& sh) : seq(s), fmt(f), rows(r), shapes(sh) {}

  // Forward value; a parameter's working copy; a buffer's fp32 values.
  virtual BufferView in(size_t i) = 0;
  // The ggml blocks input i is held in (a quantized frozen weight,
  // Tensor::blocks); nullopt for a tensor in the run's format.
  virtual std::optional<quant::GgmlType> blocks(size_t) { return std::nullopt; }
  // A parameter input's fp32 master (ops that read weights in fp32).
  virtual BufferView master(size_t i) = 0;
  // The node's own fp32 memory kept across steps (OpDef::state_floats).
  virtual BufferView node_state() = 0;
  // The executor's random source, counter set (Executor::set_random_source).
  virtual RandomSource random() = 0;
  // The step's TrainState (its applied flag): in a commit only.
  virtual Buffer& train_state() = 0;
  virtual BufferView out() = 0;
  virtual BufferView kept() = 0;        // op scratch kept from forward to backward
  // The node that computed input i, and its kept scratch, for a backward
  // that finishes that node's (attrs.dx_is_dz); Error for a parameter,
  // the graph's input, or a producer without kept scratch.
  virtual const Node& producer(size_t i) = 0;
  virtual BufferView producer_kept(size_t i) = 0;
  virtual BufferView workspace() = 0;   // op scratch for the backward only
  virtual BufferView dout() = 0;
  virtual bool wants_grad(size_t i) = 0;
  // The gradient of input i; each call counts as this node's contribution.
  virtual GradTarget grad(size_t i) = 0;
  // For kernels that can only overwrite: `write` fills a view with this
  // node's contribution, which is added to the gradient when it already
  // holds another.
  virtual void overwrite_grad(size_t i, const std::function<void(BufferView)>& write) = 0;
  // synced_ranks > 1 only: ends the recording here; the host waits for it,
  // merges `v` (a part of node_state()) across the ranks by `rule`, and the
  // rest of the step is recorded into the returned sequence (use it, not
  // `seq`, from here on).
  virtual Sequence& sync(BufferView v, HostSync rule) = 0;
};

// Input i's gradient as a kernel with ops::GradWrite takes it: Skip where
// none is wanted, else `view` set to it and Write or Add.
inline ops::GradWrite grad_write(OpRun& r, size_t i, BufferView& view) {
  if (!r.wants_grad(i)) return ops::GradWrite::Skip;
  const GradTarget t = r.grad(i);
  view = t.view;
  return t.accumulate ? ops::GradWrite::Add : ops::GradWrite::Write;
}

struct OpDef {
  std::string name;
  size_t min_inputs = 1, max_inputs = 1;
  // The input kinds: an input position in [params_from, buffers_from) must
  // be a parameter, one at or past buffers_from a buffer, and one before
  // params_from neither.
  size_t params_from = size_t(-1);
  size_t buffers_from = size_t(-1);
  bool backward_reads_inputs = false;  // keeps its activation inputs alive until its backward
  // Keeps its own output alive until its backward (a fused linear + ReLU
  // reads f'(z) off y = f(z)).
  std::function<bool(const OpShapes&)> backward_reads_output;
  bool view = false;                   // the output is the first input's bytes (flatten)
  bool reads_ids = false;              // may take a tensor of token ids (Shape::ids)
  // A 16-bit compute op (a GEMM-based one): at --amp-level O1 it runs in the
  // 16-bit format, where every other op runs in fp32 (PyTorch autocast's
  // lower-precision list; precision_plan.hpp).
  bool computes_in_16_bits_at_o1 = false;
  // Checks the inputs and returns the output shape; throws
  // std::invalid_argument saying what is wrong (Graph adds the node's name).
  std::function<Shape(const OpShapes&)> infer;
  // Scratch per example (elements): kept from forward to backward, and
  // backward-only.
  std::function<uint64_t(const OpShapes&)> kept_per_row, workspace_per_row;
  std::function<void(OpRun&)> forward, backward;
  // fp32 elements of the node's own memory kept across steps, for a step of
  // micro_batches micro-batches (OpRun::node_state; BatchNorm's pending
  // statistics); empty or 0: none.
  std::function<uint64_t(const OpShapes&, uint32_t micro_batches)> state_floats;
  // The node state's first values, where it does not start at 0: constants
  // the op computes once on the host (RoPE's cos and sin table, in double).
  std::function<std::vector<float>(const OpShapes&)> initial_state;
  // Recorded in the step's update pass after the optimizer, predicated on
  // the same applied flag (BatchNorm's running statistics); may be empty.
  std::function<void(OpRun&)> commit;
};

}  // namespace vkamp::graph
