// The check that the replicas of a data-parallel run are still replicas:
// every rank hashes the bytes of its fp32 masters, optimizer moments,
// buffers and training state (FNV-1a, 64 bits), and the ranks compare the
// smallest and the largest hash. Equal inputs and the same all-reduced gradients make
// the updates bit-identical, so any difference is a bug (or a faulty GPU)
// that would otherwise go on silently as diverging models.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "vkamp/dist/communicator.hpp"
#include "vkamp/error.hpp"
#include "vkamp/train/model.hpp"
#include "vkamp/train/gpu_state.hpp"

namespace vkamp::train {

// Thrown on every rank when the replicas differ.
class ReplicaMismatch : public Error {
 public:
  using Error::Error;
};

uint64_t fnv1a(const void* data, size_t bytes, uint64_t hash = 1469598103934665603ull);

// The hash of this rank's masters, moments, buffers and state (waits for the GPU).
uint64_t replica_hash(Model& model, const TrainState& state);

// Without --sync-bn each rank normalises with its own batch statistics, so
// BatchNorm's running buffers drift apart between checks: this replaces
// every rank's with their mean over the ranks (no step may be in flight).
void average_buffers(dist::Communicator& comm, Model& model);

// Averages the buffers (average_buffers), then compares the ranks' hashes; throws ReplicaMismatch naming `step` (the
// steps run so far) when they differ. Every rank must call it at the same step.
void check_replicas(dist::Communicator& comm, Model& model, const TrainState& state, uint32_t step);

}  // namespace vkamp::train
