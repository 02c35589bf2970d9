#include "vkamp/train/hf_weights.hpp"

#include <algorithm>

#include "vkamp/graph/graph.hpp"
#include "vkamp/models/hf_checkpoint.hpp"

namespace vkamp::train {

void load_hf_weights(const std::string& dir, Model& m) {
  std::vector<float> master = m.read_master();
  models::load_hf_weights(dir, m.graph(), [&](const std::string& name, std::vector<float>&& v) {
    if (m.graph().tensor(name).kind == graph::TensorKind::Frozen) {
      m.frozen().write(name, v);
      return;
    }
    for (const graph::ParamTensor& t : m.tensors())
      if (t.name == name) std::copy(v.begin(), v.end(), master.begin() + t.offset);
  });
  m.write_master(master);
}

}  // namespace vkamp::train
