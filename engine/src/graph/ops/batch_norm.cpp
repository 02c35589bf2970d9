// batch_norm: BatchNorm over the channels c of an image (BatchNorm2d) or the
// features of a vector (BatchNorm1d). Inputs x, params weight {c} and bias
// {c} (read in fp32 from the masters), buffers running_mean {c},
// running_var {c} and num_batches_tracked {1}.
//
// Training: each micro-batch m normalises with its own batch statistics,
// written to block m of the node's pending buffer, which the backward reads
// again; the step's update pass commits every block into the running
// buffers after the optimizer, predicated on the applied flag, so a skipped
// step (an overflow) never touches them. Eval normalises with the running
// buffers.
//
// --sync-bn under MPI (OpRun::synced_ranks > 1), as PyTorch's SyncBatchNorm:
// the host merges each micro-batch's statistics across the ranks between
// the statistics and the normalisation, and in the backward the column sums
// (their mean over the ranks) between the parameter gradients, which stay
// this rank's own (the gradient all-reduce sums them), and dx. With every
// rank's sums divided by the ranks, dx's 1/rows is 1/(all rows): the
// formula over the whole global batch. The commit's unbiased variance uses
// the global row count.
//
// --amp-level O3 (OpShapes::norm_in_16_bits): weight and bias as the 16-bit
// working copy holds them, and each micro-batch's statistics rounded to the
// 16-bit format before anything reads them; the running buffers stay fp32.
//
// Node state (fp32): micro_batches blocks of {mean[c], var[c]}, then the
// backward's column sums {sum dy[c], sum dy*xhat[c]}.
#include <stdexcept>

#include "vkamp/graph/op.hpp"
#include "vkamp/ops/batch_norm.hpp"
#include "vkamp/ops/convert.hpp"

namespace vkamp::graph {
namespace {

constexpr size_t kX = 0, kWeight = 1, kBias = 2, kRunningMean = 3, kRunningVar = 4, kTracked = 5;

uint32_t channels(const OpRun& r) { return r.shapes.out.c; }
uint32_t normalised_rows(const OpRun& r) { return r.rows * r.shapes.in[kX]->shape.positions(); }

BufferView floats(BufferView v, uint64_t first, uint64_t count) {
  return BufferView(*v.buffer, v.offset + first * 4, count * 4);
}

// Micro-batch m's {mean, var} block, the mean and var halves of it, and
// the backward's sums, all in the node state.
BufferView pending_block(OpRun& r, uint32_t m) { return floats(r.node_state(), uint64_t(2) * channels(r) * m, 2 * channels(r)); }
BufferView batch_mean(OpRun& r) { return floats(pending_block(r, r.micro_batch), 0, channels(r)); }
BufferView batch_var(OpRun& r) { return floats(pending_block(r, r.micro_batch), channels(r), channels(r)); }
BufferView grad_sums(OpRun& r) {
  return floats(r.node_state(), uint64_t(2) * channels(r) * r.micro_batches, 2 * channels(r));
}

// Weight or bias in fp32: the master, or at O3 the 16-bit working copy
// widened into scratch of `seq`.
BufferView affine(OpRun& r, Sequence& seq, size_t i) {
  if (!r.shapes.norm_in_16_bits) return r.master(i);
  BufferView wide = seq.scratch(size_t(channels(r)) * 4);
  ops::convert_to_f32(seq, r.fmt, r.in(i), wide, channels(r));
  return wide;
}

// O3: micro-batch m's {mean, var} block rounded to the 16-bit format in
// place, through aligned scratch (the block may start at any 4-byte offset).
void round_statistics(OpRun& r, Sequence& seq, BufferView block) {
  if (!r.shapes.norm_in_16_bits) return;
  const uint32_t n = 2 * channels(r);
  Sequence::ScratchScope scope(seq);
  BufferView wide = seq.scratch(size_t(n) * 4), narrow = seq.scratch(size_t(n) * format_bytes(r.fmt));
  seq.copy(*block.buffer, *wide.buffer, size_t(n) * 4, block.offset, wide.offset);
  ops::convert_from_f32(seq, r.fmt, wide, narrow, n);
  ops::convert_to_f32(seq, r.fmt, narrow, wide, n);
  seq.copy(*wide.buffer, *block.buffer, size_t(n) * 4, wide.offset, block.offset);
}

}  // namespace

OpDef batch_norm_op() {
  OpDef d;
  d.name = "batch_norm";
  d.min_inputs = d.max_inputs = 6;
  d.params_from = kWeight;
  d.buffers_from = kRunningMean;
  d.backward_reads_inputs = true;  // xhat from x and the pending statistics
  d.infer = [](const OpShapes& s) {
    uint32_t c = s.in[kX]->shape.c;
    if (s.in[kX]->shape.ids) throw std::invalid_argument("batch_norm cannot normalise token ids");
    for (size_t i : {kWeight, kBias, kRunningMean, kRunningVar})
      if (s.in[i]->dims != std::vector<uint32_t>{c})
        throw std::invalid_argument("'" + s.in[i]->name + "' must be {" + std::to_string(c) + "}");
    if (s.in[kTracked]->dims != std::vector<uint32_t>{1})
      throw std::invalid_argument("'" + s.in[kTracked]->name + "' must be {1}");
    return s.in[kX]->shape;
  };
  d.state_floats = [](const OpShapes& s, uint32_t micro_batches) {
    return uint64_t(2) * s.out.c * (micro_batches + 1);
  };
  d.forward = [](OpRun& r) {
    const uint32_t c = channels(r), rows = normalised_rows(r);
    if (r.mode == ForwardMode::Eval) {
      ops::batch_norm_forward(r.seq, r.fmt, r.in(kX), r.in(kRunningMean), r.in(kRunningVar), affine(r, r.seq, kWeight),
                              affine(r, r.seq, kBias), r.out(), rows, c);
      return;
    }
    ops::batch_norm_statistics(r.seq, r.fmt, r.in(kX), pending_block(r, r.micro_batch), rows, c);
    Sequence& seq = r.synced_ranks > 1 ? r.sync(pending_block(r, r.micro_batch), HostSync::BatchStatistics) : r.seq;
    round_statistics(r, seq, pending_block(r, r.micro_batch));
    ops::batch_norm_forward(seq, r.fmt, r.in(kX), batch_mean(r), batch_var(r), affine(r, seq, kWeight),
                            affine(r, seq, kBias), r.out(), rows, c);
  };
  d.backward = [](OpRun& r) {
    const uint32_t c = channels(r), rows = normalised_rows(r);
    ops::batch_norm_grad_sums(r.seq, r.fmt, r.in(kX), batch_mean(r), batch_var(r), r.dout(), grad_sums(r), rows, c);
    GradTarget dweight = r.grad(kWeight), dbias = r.grad(kBias);
    ops::batch_norm_param_grads(r.seq, r.fmt, grad_sums(r), dweight.view, dbias.view, c, dweight.accumulate,
                                dbias.accumulate);
    if (r.wants_grad(kX)) {
      Sequence& seq = r.synced_ranks > 1 ? r.sync(grad_sums(r), HostSync::ColumnSums) : r.seq;
      GradTarget dx = r.grad(kX);
      ops::batch_norm_backward_input(seq, r.fmt, r.in(kX), batch_mean(r), batch_var(r), affine(r, seq, kWeight), r.dout(),
                                     grad_sums(r), dx.view, rows, c, dx.accumulate);
    }
  };
  d.commit = [](OpRun& r) {
    const uint32_t c = channels(r);
    ops::batch_norm_commit(r.seq, r.train_state(), floats(r.node_state(), 0, uint64_t(2) * c * r.micro_batches),
                           r.in(kRunningMean), r.in(kRunningVar), r.in(kTracked), c, r.micro_batches,
                           normalised_rows(r) * r.synced_ranks);
  };
  return d;
}

}  // namespace vkamp::graph
