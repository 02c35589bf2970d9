#include "app/run_weights.hpp"

#include <cstdio>

#include "app/monitor.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/io/torch_layout.hpp"
#include "vkamp/models/model_spec.hpp"

namespace vkamp::app {

void init_weights_from_file(const RunOptions& cfg, train::Trainer& trainer) {
  if (cfg.init_from.empty()) return;
  train::Model& model = trainer.model();
  const io::TensorFile file = io::read_safetensors(cfg.init_from);
  std::vector<float> buffers;
  model.write_master(model.spec().layers.empty() ? io::import_torch_tensors(model.graph(), file, cfg.init_from, &buffers)
                                                 : io::import_torch_tensors(model.spec(), file, cfg.init_from, &buffers));
  model.write_buffers(buffers);  // BatchNorm's running statistics
  std::fprintf(stderr, "weights loaded from %s\n", cfg.init_from.c_str());
}

void save_weights(const RunOptions& cfg, train::Trainer& trainer, const RunResult& s,
                  const std::map<std::string, std::string>& extra) {
  if (cfg.save_path.empty()) return;
  const train::Model& model = trainer.model();
  const bool best = cfg.save_best && s.best && !s.best_weights.empty();
  const std::vector<float> weights = best ? s.best_weights : model.read_master();
  const std::vector<float> buffers = best ? s.best_buffers : model.read_buffers();
  const io::DType dtype = cfg.save_dtype == Format::F16    ? io::DType::F16
                          : cfg.save_dtype == Format::BF16 ? io::DType::BF16
                                                           : io::DType::F32;
  io::TensorFile file;
  const bool from_spec = !model.spec().layers.empty();
  file.tensors = from_spec ? io::export_torch_tensors(model.spec(), weights, dtype, buffers)
                           : io::export_torch_tensors(model.graph(), weights, dtype, buffers);
  char scale[32];
  std::snprintf(scale, sizeof scale, "%.9g", double(s.final_scale));
  file.metadata = {{"vkamp.model", from_spec ? models::describe(model.spec()) : model.graph().origin()},
                   {"vkamp.precision", format_name(cfg.precision)},
                   {"vkamp.step", std::to_string(best ? s.best->applied : s.applied)},
                   {"vkamp.loss_scale", scale}};
  for (const auto& [key, value] : extra) file.metadata[key] = value;
  io::write_safetensors(cfg.save_path, file);
  if (best)
    std::printf("  weights (%s) of %s (the best %s) written to %s\n", io::dtype_name(dtype), s.best_at.c_str(),
                monitor_text(cfg.early_stop_monitor, s.best_value).c_str(), cfg.save_path.c_str());
  else std::printf("  weights (%s) written to %s\n", io::dtype_name(dtype), cfg.save_path.c_str());
}

}  // namespace vkamp::app
