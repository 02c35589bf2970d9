// The weights files of a run: --init-from before training, --save (with
// --save-best's choice and --save-dtype) after it. Shared by the samples,
// vkamp-train and vkamp-studio.
#pragma once
#include <map>
#include <string>

#include "app/run_loop.hpp"
#include "app/run_options.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::app {

// --init-from FILE: loads the file's weights (PyTorch names and layouts,
// torch_layout.hpp) into the trainer's model, checked against it; call it
// before training. Nothing when the flag is not given. Throws
// io::FormatError naming the file.
void init_weights_from_file(const RunOptions& cfg, train::Trainer& trainer);

// --save FILE.safetensors: writes the model's weights as cfg.save_dtype,
// with the vkamp.* metadata of the run `s`: the last weights, or with
// --save-best those of s.best. Nothing when the flag is not given; call it
// only after a successful run. Prints where they went and, with
// --save-best, from which evaluation. `extra` adds metadata (vkamp-train's
// classes and standardization).
void save_weights(const RunOptions& cfg, train::Trainer& trainer, const RunResult& s,
                  const std::map<std::string, std::string>& extra = {});

}  // namespace vkamp::app
