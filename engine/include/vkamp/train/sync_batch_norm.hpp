// --sync-bn's host side (PyTorch's SyncBatchNorm): at each of the step's
// sync points (graph::OpRun::sync) the host reads a BatchNorm node's state,
// merges it across the ranks and writes it back before the rest of the step
// runs. Every rank normalises the same number of rows per micro-batch, so
// the merge needs no counts.
//
// Batch statistics, numerically safe at large offsets (no E[x^2] - E[x]^2):
// the global mean is the mean of the ranks' means; the global biased
// variance is the mean over the ranks of var_r + (mean_r - mean)^2, each
// rank's centred sum of squares about the global mean (Chan's merge with
// equal counts). Column sums (the backward's sum dy, sum dy*xhat) become
// their mean over the ranks: BatchNorm's dx divides them by this rank's
// rows, so sum / ranks / rows is the sum over all rows / all rows.
//
// The ranks sum in MPI's order, the same on every rank, so every rank
// writes the same bits; an inf or NaN on one rank reaches all of them.
#pragma once
#include <cstddef>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/dist/communicator.hpp"
#include "vkamp/graph/op.hpp"

namespace vkamp::train {

// The merge on host values: `values` holds {mean[c], var[c]}
// (BatchStatistics) or column sums (ColumnSums), replaced in place.
void merge_across_ranks(dist::Communicator& comm, std::vector<float>& values, graph::HostSync rule);

class SyncBatchNorm {
 public:
  explicit SyncBatchNorm(dist::Communicator& comm) : comm_(comm) {}
  // Reads `bytes` of `state` at `offset`, merges them (merge_across_ranks)
  // and writes them back. Every rank must call it at the same point.
  void run(Buffer& state, size_t offset, size_t bytes, graph::HostSync rule);
  uint64_t merges() const { return merges_; }

 private:
  dist::Communicator& comm_;
  std::vector<float> host_;
  uint64_t merges_ = 0;
};

}  // namespace vkamp::train
