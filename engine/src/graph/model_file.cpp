#include "vkamp/graph/model_file.hpp"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

#include "vkamp/config_error.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::graph {
namespace {

using vkamp::ConfigError;

Init init_named(const Graph& g, const std::string& node, const std::string& s) {
  if (s == "kaiming") return Init::Kaiming;
  if (s == "xavier") return Init::Xavier;
  if (s == "zero") return Init::Zero;
  if (s == "one") return Init::One;
  if (s == "normal") return Init::Normal;
  if (s == "torch_linear") return Init::TorchLinear;
  g.fail(node, "unknown init '" + s + "' (kaiming, xavier, zero, one, normal, torch_linear)");
}

Attributes attributes_of(const Graph& g, const std::string& name, const YAML::Node& n) {
  Attributes a;
  if (n["act"]) {
    const std::string s = n["act"].as<std::string>();
    auto act = ops::parse_activation(s);
    if (!act) g.fail(name, "unknown activation '" + s + "' (" + ops::activation_names_text() + ")");
    a.act = *act;
  }
  if (n["window"]) a.window = n["window"].as<uint32_t>();
  a.stride = n["stride"] ? n["stride"].as<uint32_t>() : a.window ? a.window : 1;  // pooling: the window
  if (n["pad"]) a.pad = n["pad"].as<uint32_t>();
  if (n["heads"]) a.heads = n["heads"].as<uint32_t>();
  if (n["p"]) a.p = n["p"].as<double>();
  if (n["eps"]) a.eps = n["eps"].as<double>();
  return a;
}

// tokens: the input is a sequence of d[0] token ids (an embedding reads it).
Shape shape_of(const Graph& g, const std::string& name, const std::vector<uint32_t>& d, bool tokens) {
  if (tokens && d.size() == 1) return Shape::tokens(d[0]);
  if (tokens) g.fail(name, "a tokens input's shape is [positions]");
  if (d.size() == 1) return Shape::vector(d[0]);
  if (d.size() == 2) return Shape::sequence(d[0], d[1]);
  if (d.size() == 3) return Shape::picture(d[0], d[1], d[2]);
  g.fail(name, "an input shape is [features], [positions, features] or [h, w, c]");
}

// Adds the nodes in an order where every input exists before its use.
// (Indices, not erasure: assigning a YAML::Node rewrites the node it refers to.)
void add_nodes(Graph& g, const YAML::Node& nodes) {
  std::vector<YAML::Node> pending;
  std::set<std::string> names;
  for (const YAML::Node& n : nodes) {
    std::string name = n["name"] ? n["name"].as<std::string>() : "";
    if (name.empty()) g.fail("?", "a node needs a name");
    if (!n["op"]) g.fail(name, "a node needs an op");
    if (!names.insert(name).second || g.has_tensor(name)) g.fail(name, "the name '" + name + "' is already used");
    pending.push_back(n);
  }
  std::vector<bool> added(pending.size(), false);
  for (size_t left = pending.size(); left > 0;) {
    size_t before = left;
    for (size_t i = 0; i < pending.size(); ++i) {
      if (added[i]) continue;
      const YAML::Node& n = pending[i];
      auto inputs = n["inputs"] ? n["inputs"].as<std::vector<std::string>>() : std::vector<std::string>{};
      std::string name = n["name"].as<std::string>();
      bool ready = true;
      for (const std::string& in : inputs) {
        if (!g.has_tensor(in) && !names.count(in)) g.fail(name, "unknown input '" + in + "'");
        ready = ready && g.has_tensor(in);
      }
      if (!ready) continue;
      const std::string op = n["op"].as<std::string>();
      // The short form declares the BatchNorm's parameters and buffers itself.
      if (op == "batch_norm" && inputs.size() == 1) g.batch_norm(name, inputs[0]);
      else g.node(name, op, inputs, attributes_of(g, name, n));
      added[i] = true;
      --left;
    }
    if (left == before)
      for (size_t i = 0; i < pending.size(); ++i)
        if (!added[i]) g.fail(pending[i]["name"].as<std::string>(), "is part of a cycle");
  }
}

}  // namespace

Graph parse_model_yaml(const std::string& text, const std::string& origin) {
  Graph g;
  g.set_origin(origin);
  std::string at = "the model";
  try {
    YAML::Node root = YAML::Load(text);
    const YAML::Node input = root["input"];
    if (!input || !input["name"] || !input["shape"]) g.fail("input", "needs a name and a shape");
    at = input["name"].as<std::string>();
    const bool tokens = input["tokens"] && input["tokens"].as<bool>();
    g.input(at, shape_of(g, at, input["shape"].as<std::vector<uint32_t>>(), tokens));
    for (const YAML::Node& p : root["params"]) {
      at = p["name"] ? p["name"].as<std::string>() : "?";
      if (!p["dims"]) g.fail(at, "a parameter needs dims");
      Init init = p["init"] ? init_named(g, at, p["init"].as<std::string>()) : Init::Kaiming;
      g.param(at, p["dims"].as<std::vector<uint32_t>>(), init, p["std"] ? p["std"].as<double>() : 0.0);
    }
    for (const YAML::Node& b : root["buffers"]) {
      at = b["name"] ? b["name"].as<std::string>() : "?";
      if (!b["dims"]) g.fail(at, "a buffer needs dims");
      g.buffer(at, b["dims"].as<std::vector<uint32_t>>(),
               b["init"] ? init_named(g, at, b["init"].as<std::string>()) : Init::Zero);
    }
    at = "nodes";
    add_nodes(g, root["nodes"]);
    if (!root["output"]) g.fail("output", "the model needs an output");
    at = root["output"].as<std::string>();
    g.set_output(at);
  } catch (const YAML::Exception& e) {
    throw ConfigError(origin + ": near '" + at + "': " + e.what());
  }
  return g;
}

Graph load_model_file(const std::string& path) {
  std::ifstream in(vkamp::platform::path_from_utf8(path), std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot read the model file");
  std::stringstream text;
  text << in.rdbuf();
  return parse_model_yaml(text.str(), path);
}

}  // namespace vkamp::graph
