#include "vkamp/train/sync_batch_norm.hpp"

#include "vkamp/error.hpp"

namespace vkamp::train {

void merge_across_ranks(dist::Communicator& comm, std::vector<float>& values, graph::HostSync rule) {
  const float ranks = float(comm.size());
  if (rule == graph::HostSync::ColumnSums) {
    comm.sum(values.data(), values.size());
    for (float& v : values) v /= ranks;
    return;
  }
  if (values.size() % 2 != 0) throw Error("SyncBatchNorm: a statistics block of " + std::to_string(values.size()) +
                                          " floats is not {mean[c], var[c]}");
  const size_t c = values.size() / 2;
  std::vector<float> mean(values.begin(), values.begin() + c);
  comm.sum(mean.data(), c);
  for (float& m : mean) m /= ranks;
  // var_r + (mean_r - mean)^2: this rank's rows' mean squared distance from
  // the global mean.
  std::vector<float> centred(c);
  for (size_t i = 0; i < c; ++i) {
    const float d = values[i] - mean[i];
    centred[i] = values[c + i] + d * d;
  }
  comm.sum(centred.data(), c);
  for (size_t i = 0; i < c; ++i) {
    values[i] = mean[i];
    values[c + i] = centred[i] / ranks;
  }
}

void SyncBatchNorm::run(Buffer& state, size_t offset, size_t bytes, graph::HostSync rule) {
  host_.resize(bytes / 4);
  state.read(host_.data(), bytes, offset);
  merge_across_ranks(comm_, host_, rule);
  state.write(host_.data(), bytes, offset);
  ++merges_;
}

}  // namespace vkamp::train
