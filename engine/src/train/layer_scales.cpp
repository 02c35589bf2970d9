#include "vkamp/train/layer_scales.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "vkamp/gpu_abi/layer_scale.h"
#include "vkamp/config_error.hpp"
#include "vkamp/error.hpp"

namespace vkamp::train {
namespace {

// The format's smallest positive value (docs/design.md, "Storage formats":
// fp16 2^-24, cb16 2^-39). bf16's (2^-133) and fp32's (2^-149) are not
// normal fp32 numbers, which layer_scale.comp divides by; 2^-126 stands in:
// format_max over it is past fp32 anyway, so the jump is the largest
// allowed either way.
float smallest_subnormal(Format f) {
  switch (f) {
    case Format::F16: return 0x1p-24f;
    case Format::CB16: return 0x1p-39f;
    default: return 0x1p-126f;
  }
}

}  // namespace

LayerScales::LayerScales(Context& ctx, Model& model, const config::ScalerConfig& sc)
    : ctx_(ctx), groups_(graph::scale_groups(model.graph(), model.executor().steps())),
      format_max_(float(std::min(format_max(model.format()), 3.4028234663852886e38))),
      format_tiny_(smallest_subnormal(model.format())) {
  const uint32_t G = count();
  if (G == 0) throw ConfigError("--loss-scale per-layer: the model has no parameters");
  if (!sc.fixed_layer_scales.empty() && sc.fixed_layer_scales.size() != G)
    throw Error("per-layer loss scaling: " + std::to_string(sc.fixed_layer_scales.size()) +
                " fixed scales given for " + std::to_string(G) + " scale groups");
  std::map<std::string, uint32_t> group_of;
  for (uint32_t g = 0; g < G; ++g)
    for (const std::string& p : groups_.groups[g].params) group_of[p] = g;
  for (const graph::ParamTensor& t : model.tensors()) tensor_group_.push_back(group_of.at(t.name));

  std::vector<LayerScale> init(G);
  for (uint32_t g = 0; g < G; ++g) {
    LayerScale& l = init[g];
    const bool fixed = !sc.fixed_layer_scales.empty();
    l.scale = float(fixed ? sc.fixed_layer_scales[g] : sc.initial_loss_scale);
    l.inv_scale = 1.0f / l.scale;
    l.upstream = groups_.groups[g].upstream;
    l.frozen = fixed ? 1 : 0;
  }
  layers_ = std::make_unique<Buffer>(ctx, G * sizeof(LayerScale));
  factors_ = std::make_unique<Buffer>(ctx, G * sizeof(float));
  tensor_groups_ = std::make_unique<Buffer>(ctx, std::max<size_t>(tensor_group_.size(), 1) * 4);
  tensor_groups_->write(tensor_group_);
  write(init);
  model.executor().set_group_rescale(factors_.get(), groups_);
}

float LayerScales::output_scale() const {
  return groups_.output_group < 0 ? 1.0f : read()[groups_.output_group].scale;
}

void LayerScales::record_update(Sequence& seq, Buffer& state, Buffer& params, Buffer& stats, Buffer& records) {
  const shader::LayerScalePush push{count(), groups_.output_group, format_max_, format_tiny_};
  auto k = ctx_.kernel<shader::LayerScaleShader>();
  seq.dispatch(k, {state, params, *layers_, *factors_, *tensor_groups_, stats, records}, push, {1}, "layer_scale");
}

std::vector<LayerScale> LayerScales::read() const {
  std::vector<LayerScale> v(count());
  layers_->read(v.data(), v.size() * sizeof(LayerScale));
  return v;
}

void LayerScales::write(const std::vector<LayerScale>& layers) {
  if (layers.size() != count())
    throw Error("per-layer loss scaling: " + std::to_string(layers.size()) + " layer scales for " +
                std::to_string(count()) + " scale groups");
  layers_->write(layers.data(), layers.size() * sizeof(LayerScale));
  std::vector<float> f(count(), 1.0f);
  for (uint32_t g = 0; g < count(); ++g)
    if (layers[g].upstream >= 0) f[g] = layers[layers[g].upstream].scale / layers[g].scale;
  factors_->write(f);
}

}  // namespace vkamp::train
