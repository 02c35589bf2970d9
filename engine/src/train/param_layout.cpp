#include "vkamp/train/param_layout.hpp"

#include "vkamp/error.hpp"

namespace vkamp::train {
namespace {

// Element counts and offsets go to the ops as 32-bit values.
uint32_t checked(uint64_t n, const std::string& what) {
  if (n > 0xFFFFFFFFull) throw Error("Model: " + what + " has " + std::to_string(n) + " elements, over 2^32");
  return uint32_t(n);
}

}  // namespace

std::vector<ParamTensor> param_layout(const ModelSpec& spec, uint32_t* padded_total) {
  const std::vector<Shape> shapes = layer_shapes(spec);
  std::vector<ParamTensor> tensors;
  uint32_t total = 0, convs = 0, linears = 0;
  for (size_t l = 0; l < spec.layers.size(); ++l) {
    const LayerSpec& L = spec.layers[l];
    if (!L.has_params()) continue;
    const Shape& in = shapes[l];
    bool conv = L.kind == LayerKind::Conv2d;
    std::string name = conv ? "conv" + std::to_string(++convs) : "fc" + std::to_string(++linears);
    uint64_t weights = conv ? uint64_t(L.out) * L.kernel * L.kernel * in.c : uint64_t(L.out) * in.elements();
    for (auto [suffix, size] : {std::pair{".weight", weights}, std::pair{".bias", uint64_t(L.out)}}) {
      tensors.push_back({name + suffix, total, checked(size, name + suffix)});
      uint64_t padded = (size + kParamTensorAlign - 1) / kParamTensorAlign * kParamTensorAlign;
      total = checked(uint64_t(total) + padded, "the parameters");
    }
  }
  if (padded_total) *padded_total = total;
  return tensors;
}

}  // namespace vkamp::train
