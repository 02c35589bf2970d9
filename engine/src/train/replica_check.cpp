#include "vkamp/train/replica_check.hpp"

#include <cstddef>
#include <cstdio>
#include <vector>

namespace vkamp::train {

uint64_t fnv1a(const void* data, size_t bytes, uint64_t hash) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}

uint64_t replica_hash(Model& model, const TrainState& state) {
  uint64_t h = fnv1a(&state, offsetof(TrainState, pad2));  // the padding is nobody's state
  std::vector<uint8_t> bytes;
  for (Buffer* b : {&model.master(), &model.moment1(), &model.moment2()}) {
    bytes.resize(b->bytes());
    b->read(bytes.data(), bytes.size());
    h = fnv1a(bytes.data(), bytes.size(), h);
  }
  const std::vector<float> buffers = model.read_buffers();
  return fnv1a(buffers.data(), buffers.size() * sizeof(float), h);
}

void average_buffers(dist::Communicator& comm, Model& model) {
  if (model.buffers().empty() || comm.size() == 1) return;
  std::vector<float> b = model.read_buffers();
  comm.sum(b.data(), b.size());  // one fixed order for every rank: the same bits everywhere
  const float ranks = float(comm.size());
  for (float& v : b) v /= ranks;
  model.write_buffers(b);
}

void check_replicas(dist::Communicator& comm, Model& model, const TrainState& state, uint32_t step) {
  average_buffers(comm, model);
  const uint64_t h = replica_hash(model, state);
  const uint64_t lo = comm.min(h), hi = comm.max(h);
  if (lo == hi) return;
  char text[64];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  throw ReplicaMismatch("the replicas differ after " + std::to_string(step) + " steps" +
                        ": the hash of this rank's weights, optimizer moments, buffers and state is " + text +
                        "; the ranks' masters, optimizer state or buffers are no longer identical");
}

}  // namespace vkamp::train
