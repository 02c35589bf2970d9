// A Hugging Face folder's (or a GGUF file's) weights into a Model built from llama_graph: the
// trained parameters into the fp32 masters (and so the working copy), the
// frozen base straight into its store, a slice of a tensor at a time; LoRA adapters
// keep the values they started with. ConfigError as load_hf_weights says.
#pragma once
#include <cstdint>
#include <string>

#include "vkamp/io/gguf.hpp"
#include "vkamp/train/model.hpp"

namespace vkamp::train {

uint64_t load_hf_weights(const std::string& dir, Model& m);  // the bytes read
// The same from a GGUF file (models/gguf_model.hpp): the tensors the graph
// holds in the file's blocks are copied in as they are.
uint64_t load_gguf_weights(const io::GgufFile& f, Model& m);

}  // namespace vkamp::train
