#include "vkamp/train/checkpointer.hpp"

#include <cstring>
#include <vector>

#include "vkamp/train/checkpoint_file.hpp"
#include "vkamp/config/train_config.hpp"

namespace vkamp::train {
namespace {

template <class T>
std::vector<uint8_t> bytes_of(const T* p, size_t n) {
  auto* b = reinterpret_cast<const uint8_t*>(p);
  return std::vector<uint8_t>(b, b + n * sizeof(T));
}

// The section `name`, which must hold `bytes` bytes (any size for 0).
const std::vector<uint8_t>& section(const CheckpointFile& ck, const std::string& path, const char* name,
                                    size_t bytes) {
  auto it = ck.sections.find(name);
  if (it == ck.sections.end()) throw CheckpointError("checkpoint " + path + " has no '" + name + "' section");
  if (bytes && it->second.size() != bytes)
    throw CheckpointError("checkpoint " + path + ": section '" + name + "' has " +
                          std::to_string(it->second.size()) + " bytes, this run needs " + std::to_string(bytes));
  return it->second;
}

}  // namespace

std::string Checkpointer::meta() const {
  return "model=" + model_.description() + " precision=" + format_name(model_.format()) +
         " params=" + std::to_string(model_.param_elements());
}

void Checkpointer::save(const std::string& path, const TrainState& st, const AutoScaleState& auto_scale) const {
  CheckpointFile ck;
  const std::string m = meta();
  ck.sections["meta"] = std::vector<uint8_t>(m.begin(), m.end());
  auto w = model_.read_master();
  ck.sections["master"] = bytes_of(w.data(), w.size());
  // BatchNorm's running statistics (fp32, the BufferStore's flat layout).
  if (!model_.buffers().empty()) {
    const std::vector<float> b = model_.read_buffers();
    ck.sections["buffers"] = bytes_of(b.data(), b.size());
  }
  for (auto [name, buf] : {std::pair{"moment1", &model_.moment1()}, std::pair{"moment2", &model_.moment2()}}) {
    std::vector<uint8_t> b(buf->bytes());
    buf->read(b.data(), b.size());
    ck.sections[name] = std::move(b);
  }
  ck.sections["state"] = bytes_of(&st, 1);
  ck.sections["auto_scale"] = bytes_of(&auto_scale, 1);
  ck.sections["seed"] = bytes_of(&seed_, 1);
  if (layers_) {
    const std::vector<LayerScale> l = layers_->read();
    ck.sections["layer_scales"] = bytes_of(l.data(), l.size());
  }
  save_checkpoint_file(path, ck);
}

TrainState Checkpointer::load(const std::string& path, AutoScaleState& auto_scale) const {
  CheckpointFile ck = load_checkpoint_file(path);
  const auto& saved_meta = section(ck, path, "meta", 0);
  const std::string have(saved_meta.begin(), saved_meta.end()), want = meta();
  if (have != want) throw CheckpointError("checkpoint " + path + " holds " + have + "; this run is " + want);
  uint64_t s;
  std::memcpy(&s, section(ck, path, "seed", 8).data(), 8);
  if (s != seed_)
    throw CheckpointError("checkpoint " + path + " was trained with --seed " + std::to_string(s) +
                          "; resume with the same seed so the data order continues");
  const auto& master = section(ck, path, "master", size_t(model_.param_elements()) * 4);
  std::vector<float> w(model_.param_elements());
  std::memcpy(w.data(), master.data(), master.size());
  model_.write_master(w);
  if (!model_.buffers().empty()) {
    std::vector<float> b(model_.buffers().padded_elements());
    const auto& saved = section(ck, path, "buffers", b.size() * 4);
    std::memcpy(b.data(), saved.data(), saved.size());
    model_.write_buffers(b);
  }
  const auto& m1 = section(ck, path, "moment1", model_.moment1().bytes());
  model_.moment1().write(m1.data(), m1.size());
  const auto& m2 = section(ck, path, "moment2", model_.moment2().bytes());
  model_.moment2().write(m2.data(), m2.size());
  TrainState st;
  std::memcpy(&st, section(ck, path, "state", sizeof(st)).data(), sizeof(st));
  // Checkpoints from before --loss-scale auto have no such section.
  auto_scale = AutoScaleState{};
  if (ck.sections.count("auto_scale"))
    std::memcpy(&auto_scale, section(ck, path, "auto_scale", sizeof(auto_scale)).data(), sizeof(auto_scale));
  if (layers_) {
    if (!ck.sections.count("layer_scales"))
      throw CheckpointError("checkpoint " + path +
                            " has no 'layer_scales' section: it was not saved by a --loss-scale per-layer run");
    std::vector<LayerScale> l(layers_->count());
    const auto& b = section(ck, path, "layer_scales", l.size() * sizeof(LayerScale));
    std::memcpy(l.data(), b.data(), b.size());
    layers_->write(l);
  }
  return st;
}

}  // namespace vkamp::train
