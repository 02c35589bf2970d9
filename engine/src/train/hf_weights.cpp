#include "vkamp/train/hf_weights.hpp"

#include <algorithm>

#include "vkamp/graph/graph.hpp"
#include "vkamp/models/hf_checkpoint.hpp"

namespace vkamp::train {

uint64_t load_hf_weights(const std::string& dir, Model& m) {
  std::vector<float> master = m.read_master();
  const uint64_t read = models::load_hf_weight_slices(dir, m.graph(), [&](const std::string& name, uint64_t first,
                                                                          std::vector<float>&& v) {
    if (m.graph().tensor(name).kind == graph::TensorKind::Frozen) {
      m.frozen().write_slice(name, first, v);
      return;
    }
    for (const graph::ParamTensor& t : m.tensors())
      if (t.name == name) std::copy(v.begin(), v.end(), master.begin() + t.offset + first);
  });
  m.write_master(master);
  return read;
}

}  // namespace vkamp::train
