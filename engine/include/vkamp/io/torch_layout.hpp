// vkamp's parameters under PyTorch's names and layouts (docs/design.md, "Interchange conventions"),
// so a safetensors file written here loads into the same network built in
// PyTorch, and a PyTorch state_dict loads here:
//   Linear  fcN.weight [out, in], fcN.bias [out]
//   Conv2d  convN.weight [out, in, kh, kw] (vkamp keeps out x (ky, kx, in)),
//           convN.bias [out]
//   BatchNorm bnN.weight [c], bnN.bias [c], and the buffers
//           bnN.running_mean [c], bnN.running_var [c] (always F32) and
//           bnN.num_batches_tracked [] as I64 (PyTorch's dtype; vkamp keeps
//           an fp32 count)
//   the first Linear after a flatten of an H x W x C image has its input
//   columns in PyTorch's (c, h, w) order in the file (vkamp's are (h, w, c)).
#pragma once
#include <string>
#include <vector>

#include "vkamp/graph/graph.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/models/model_spec.hpp"
#include "vkamp/models/param_layout.hpp"

namespace vkamp::io {

// param_layout(spec, &padded_total) (param_layout.hpp) gives the parameter
// tensors of a spec in vkamp's flat layout, the one Model uses.

// The fp32 masters (Model::read_master(), padded) as PyTorch tensors, stored
// as `dtype` (F32, F16 or BF16, rounded to nearest even), and the buffers
// (Model::read_buffers(), padded; empty for a model without any).
std::vector<io::Tensor> export_torch_tensors(const models::ModelSpec& spec, const std::vector<float>& master,
                                             io::DType dtype, const std::vector<float>& buffers = {});

// The masters (padded, padding zero) from a file's tensors, and the buffers
// into *buffers (padded) when given. Every parameter and buffer must be
// present with its PyTorch shape and a float dtype (F32, F16, BF16; a
// counter also I64 or I32); a missing, extra, misshapen or wrongly typed
// tensor is a FormatError that names `label` (the file) and the tensor.
std::vector<float> import_torch_tensors(const models::ModelSpec& spec, const io::TensorFile& file,
                                        const std::string& label, std::vector<float>* buffers = nullptr);

// The same for a graph whose parameters keep PyTorch's layouts as declared
// (linear, embedding, layer_norm: a GPT), under their graph names. A graph
// with conv2d or flatten nodes throws std::invalid_argument: its layouts
// are only derived for model strings.
std::vector<io::Tensor> export_torch_tensors(const graph::Graph& g, const std::vector<float>& master,
                                             io::DType dtype, const std::vector<float>& buffers = {});
std::vector<float> import_torch_tensors(const graph::Graph& g, const io::TensorFile& file, const std::string& label,
                                        std::vector<float>* buffers = nullptr);

}  // namespace vkamp::io
