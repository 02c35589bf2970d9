#include "vkamp/train/hf_weights.hpp"

#include <algorithm>

#include "vkamp/graph/graph.hpp"
#include "vkamp/models/gguf_model.hpp"
#include "vkamp/models/hf_checkpoint.hpp"

namespace vkamp::train {

namespace {

// Frozen slices into their store, trained ones into the masters.
models::TensorSliceSink into(Model& m, std::vector<float>& master) {
  return [&m, &master](const std::string& name, uint64_t first, std::vector<float>&& v) {
    if (m.graph().tensor(name).kind == graph::TensorKind::Frozen) {
      m.frozen().write_slice(name, first, v);
      return;
    }
    for (const graph::ParamTensor& t : m.tensors())
      if (t.name == name) std::copy(v.begin(), v.end(), master.begin() + t.offset + first);
  };
}

}  // namespace

uint64_t load_hf_weights(const std::string& dir, Model& m) {
  std::vector<float> master = m.read_master();
  const uint64_t read = models::load_hf_weight_slices(dir, m.graph(), into(m, master));
  m.write_master(master);
  return read;
}

uint64_t load_gguf_weights(const io::GgufFile& f, Model& m) {
  std::vector<float> master = m.read_master();
  const uint64_t read = models::load_gguf_weight_slices(
      f, m.graph(), into(m, master), [&](const std::string& name, uint64_t first_row, std::vector<uint8_t>&& rows) {
        m.frozen().write_blocks(name, first_row, rows.data(), rows.size());
      });
  m.write_master(master);
  return read;
}

}  // namespace vkamp::train
