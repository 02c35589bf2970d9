// build_graph: the model-string front end of the graph (model_spec.hpp).
// The node and parameter order follows the layers, so the parameter layout,
// the initialisation and the order of dispatches are those of the
// sequential model the strings always described.
#include "vkamp/models/model_spec.hpp"

namespace vkamp::models {

graph::Graph build_graph(const ModelSpec& spec) {
  const std::vector<Shape> shapes = layer_shapes(spec);  // throws ConfigError for a spec that cannot be built
  graph::Graph g;
  g.set_origin(describe(spec));
  std::string x = g.input("x", spec.input);
  uint32_t convs = 0, linears = 0, pools = 0, flattens = 0, norms = 0, drops = 0;
  for (size_t l = 0; l < spec.layers.size(); ++l) {
    const LayerSpec& L = spec.layers[l];
    const Shape& in = shapes[l];
    switch (L.kind) {
      case LayerKind::Linear: {
        std::string name = "fc" + std::to_string(++linears);
        g.param(name + ".weight", {L.out, in.elements()}, spec.init);
        g.param(name + ".bias", {L.out}, graph::Init::Zero);
        x = g.linear(name, x, name + ".weight", name + ".bias");
        break;
      }
      case LayerKind::Conv2d: {
        std::string name = "conv" + std::to_string(++convs);
        g.param(name + ".weight", {L.out, L.kernel, L.kernel, in.c}, spec.init);
        g.param(name + ".bias", {L.out}, graph::Init::Zero);
        x = g.conv2d(name, x, name + ".weight", name + ".bias", L.stride, L.pad);
        break;
      }
      case LayerKind::MaxPool: x = g.max_pool("pool" + std::to_string(++pools), x, L.kernel, L.stride); break;
      case LayerKind::AvgPool: x = g.avg_pool("pool" + std::to_string(++pools), x, L.kernel, L.stride); break;
      case LayerKind::Flatten: x = g.flatten("flatten" + std::to_string(++flattens), x); break;
      case LayerKind::BatchNorm: x = g.batch_norm("bn" + std::to_string(++norms), x); break;
      case LayerKind::Dropout: x = g.node("dropout" + std::to_string(++drops), "dropout", {x}, {.p = L.p}); break;
    }
    if (L.activate) x = g.activation(x + ".act", x, L.act);
  }
  g.set_output(x);
  return g;
}

}  // namespace vkamp::models
