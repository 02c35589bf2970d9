#include "vkamp/models/model_spec.hpp"

#include <cctype>
#include <charconv>
#include <sstream>

#include "vkamp/config/train_config.hpp"

namespace vkamp::models {
namespace {

constexpr uint32_t kMaxNumber = 1u << 20;

std::string act_letter(const LayerSpec& l) {
  return l.activate ? std::string(1, ops::activation_letter(l.act)) : std::string();
}

std::string shape_text(const Shape& s) {
  if (!s.image) return "a vector of " + std::to_string(s.c);
  return "an image of " + std::to_string(s.h) + "x" + std::to_string(s.w) + "x" + std::to_string(s.c);
}

// Reads one layer token ("c6k5p2r", "m2", "f", "256r", ...). Messages name
// the token only; parse_model adds the model string and the position.
class TokenReader {
 public:
  explicit TokenReader(const std::string& t) : t_(t) {}

  bool done() const { return i_ == t_.size(); }
  char peek() const { return done() ? '\0' : t_[i_]; }
  char take() { return t_[i_++]; }

  // Decimal digits, 1..kMaxNumber (0 allowed when zero_ok).
  uint32_t number(const char* what, bool zero_ok = false) {
    size_t start = i_;
    uint64_t v = 0;
    while (!done() && std::isdigit(static_cast<unsigned char>(peek()))) {
      v = v * 10 + uint64_t(take() - '0');
      if (v > kMaxNumber) throw ConfigError(std::string(what) + " is too large (at most " +
                                            std::to_string(kMaxNumber) + ")");
    }
    if (i_ == start) throw ConfigError(std::string("expected a number for the ") + what);
    if (v == 0 && !zero_ok) throw ConfigError(std::string(what) + " must be at least 1");
    return uint32_t(v);
  }

  // A decimal in [0, 1) ("0.2"): dropout's probability.
  double probability() {
    const size_t start = i_;
    while (!done() && (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '.')) take();
    double v = -1;
    const auto [end, ec] = std::from_chars(t_.data() + start, t_.data() + i_, v);
    if (i_ == start || ec != std::errc() || end != t_.data() + i_)
      throw ConfigError("expected a probability, a decimal such as 0.2 (\"d0.2\")");
    if (!(v >= 0 && v < 1)) throw ConfigError("the dropout probability must be at least 0 and below 1");
    return v;
  }

  // An optional trailing activation letter, which must end the token.
  void activation(LayerSpec& l) {
    if (done()) return;
    char c = take();
    std::optional<ops::Activation> act = ops::parse_activation_letter(c);
    if (!act)
      throw ConfigError(std::string("unexpected '") + c + "' (activations are " + ops::activation_letters_text() + ")");
    l.activate = true;
    l.act = *act;
    if (!done()) throw ConfigError("the activation letter must come last");
  }

  void end(const char* layer) {
    if (done()) return;
    char c = peek();
    if (ops::parse_activation_letter(c))
      throw ConfigError(std::string("a ") + layer + " takes no activation");
    throw ConfigError(std::string("unexpected '") + c + "' in a " + layer);
  }

 private:
  const std::string& t_;
  size_t i_ = 0;
};

Shape parse_input(const std::string& t) {
  TokenReader r(t);
  Shape s;
  uint32_t first = r.number("input width");
  if (r.done()) {
    s.c = first;
    return s;
  }
  if (r.peek() != 'x') throw ConfigError("the input is a width (\"784\") or an image HxWxC (\"28x28x1\")");
  r.take();
  s.h = first;
  s.w = r.number("input width");
  if (r.peek() != 'x') throw ConfigError("an image input needs all three of HxWxC (\"28x28x1\")");
  r.take();
  s.c = r.number("input channel count");
  if (!r.done()) throw ConfigError("unexpected text after HxWxC");
  s.image = true;
  return s;
}

LayerSpec parse_layer(const std::string& t) {
  TokenReader r(t);
  LayerSpec l;
  char c = r.peek();
  if (std::isdigit(static_cast<unsigned char>(c))) {
    l.kind = LayerKind::Linear;
    l.out = r.number("width");
    r.activation(l);
  } else if (c == 'b') {
    r.take();
    if (r.peek() != 'n') throw ConfigError("unknown layer (a BatchNorm is \"bn\", with an optional activation: \"bnr\")");
    r.take();
    l.kind = LayerKind::BatchNorm;
    r.activation(l);
  } else if (c == 'c') {
    r.take();
    l.kind = LayerKind::Conv2d;
    l.out = r.number("output channel count");
    bool seen_k = false, seen_p = false, seen_s = false;
    while (!r.done() && (r.peek() == 'k' || r.peek() == 'p' || r.peek() == 's')) {
      char o = r.take();
      bool& seen = o == 'k' ? seen_k : o == 'p' ? seen_p : seen_s;
      if (seen) throw ConfigError(std::string("'") + o + "' given twice");
      seen = true;
      if (o == 'k') l.kernel = r.number("kernel size");
      if (o == 'p') l.pad = r.number("padding", /*zero_ok=*/true);
      if (o == 's') l.stride = r.number("stride");
    }
    if (!seen_k) throw ConfigError("a conv layer needs a kernel size: c<channels>k<size>, e.g. \"c6k5\"");
    r.activation(l);
  } else if (c == 'm' || c == 'a') {
    r.take();
    l.kind = c == 'm' ? LayerKind::MaxPool : LayerKind::AvgPool;
    l.kernel = r.number("pooling window");
    l.stride = l.kernel;
    if (r.peek() == 's') {
      r.take();
      l.stride = r.number("stride");
    }
    r.end(c == 'm' ? "max pool" : "average pool");
  } else if (c == 'd') {
    r.take();
    l.kind = LayerKind::Dropout;
    l.p = r.probability();
    r.end("dropout");
  } else if (c == 'f') {
    r.take();
    l.kind = LayerKind::Flatten;
    r.end("flatten");
  } else {
    throw ConfigError("unknown layer (expected <width>, c<channels>k<size>, bn, m<window>, a<window>, f or d<p>)");
  }
  return l;
}

// The shapes, with messages that name the layer by position and text.
std::vector<Shape> shapes_or_throw(const ModelSpec& spec) {
  auto fail = [&](size_t l, const std::string& why) -> ConfigError {
    return ConfigError("layer " + std::to_string(l + 1) + " \"" + describe(spec.layers[l]) + "\": " + why);
  };
  if (spec.input.c == 0 || spec.input.h == 0 || spec.input.w == 0) throw ConfigError("the input is empty");
  if (!spec.input.image && (spec.input.h != 1 || spec.input.w != 1))
    throw ConfigError("a vector input has h = w = 1");
  if (uint64_t(spec.input.h) * spec.input.w * spec.input.c > kMaxNumber * 16ull)
    throw ConfigError("the input, " + shape_text(spec.input) + ", is too large");
  if (spec.layers.empty()) throw ConfigError("needs at least one layer");
  std::vector<Shape> shapes{spec.input};
  bool params = false;
  for (size_t l = 0; l < spec.layers.size(); ++l) {
    const LayerSpec& L = spec.layers[l];
    const Shape in = shapes.back();
    Shape out;
    if (L.activate && !L.takes_activation())
      throw fail(l, "only linear, conv and BatchNorm layers take an activation");
    switch (L.kind) {
      case LayerKind::Linear:
        if (in.image)
          throw fail(l, "a linear layer needs a vector, but gets " + shape_text(in) + ": flatten it first (\"f\")");
        if (L.out == 0) throw fail(l, "no outputs");
        out.c = L.out;
        break;
      case LayerKind::Conv2d: {
        if (!in.image) throw fail(l, "a conv layer needs an image (HxWxC), but gets " + shape_text(in));
        if (L.out == 0 || L.kernel == 0 || L.stride == 0) throw fail(l, "channels, kernel and stride must be >= 1");
        uint64_t ph = uint64_t(in.h) + 2ull * L.pad, pw = uint64_t(in.w) + 2ull * L.pad;
        if (L.kernel > ph || L.kernel > pw)
          throw fail(l, "the " + std::to_string(L.kernel) + "x" + std::to_string(L.kernel) +
                            " kernel is larger than its input, " + shape_text(in) +
                            (L.pad ? " padded by " + std::to_string(L.pad) : std::string()));
        out = {uint32_t((ph - L.kernel) / L.stride + 1), uint32_t((pw - L.kernel) / L.stride + 1), L.out, true};
        break;
      }
      case LayerKind::MaxPool:
      case LayerKind::AvgPool:
        if (!in.image) throw fail(l, "pooling needs an image (HxWxC), but gets " + shape_text(in));
        if (L.kernel == 0 || L.stride == 0) throw fail(l, "window and stride must be >= 1");
        if (L.kernel > in.h || L.kernel > in.w)
          throw fail(l, "the " + std::to_string(L.kernel) + "x" + std::to_string(L.kernel) +
                            " window is larger than its input, " + shape_text(in));
        out = {(in.h - L.kernel) / L.stride + 1, (in.w - L.kernel) / L.stride + 1, in.c, true};
        break;
      case LayerKind::Flatten:
        if (!in.image) throw fail(l, "the input is already " + shape_text(in));
        out.c = in.elements();
        break;
      case LayerKind::Dropout: out = in; break;
      case LayerKind::BatchNorm: {
        const LayerKind before = l ? spec.layers[l - 1].kind : LayerKind::Flatten;
        if (before != LayerKind::Linear && before != LayerKind::Conv2d)
          throw fail(l, "a BatchNorm follows a linear or conv layer (\"c16k3-bnr\", \"64-bnr\")");
        out = in;
        break;
      }
    }
    if (uint64_t(out.h) * out.w * out.c > kMaxNumber * 16ull)
      throw fail(l, "its output, " + shape_text(out) + ", is too large");
    params = params || L.has_params();
    shapes.push_back(out);
  }
  if (!params) throw ConfigError("needs at least one linear or conv layer");  // a BatchNorm follows one
  if (shapes.back().image)
    throw ConfigError("the model ends in " + shape_text(shapes.back()) +
                      "; end it with a vector (\"f\", then a width)");
  return shapes;
}

}  // namespace

std::string describe(const LayerSpec& l) {
  // Appends, not operator+ chains: GCC 12 warns falsely (-Wrestrict) on those.
  std::string s;
  auto option = [&](char letter, uint32_t v) {
    s += letter;
    s += std::to_string(v);
  };
  switch (l.kind) {
    case LayerKind::Linear: s = std::to_string(l.out); break;
    case LayerKind::Conv2d:
      option('c', l.out);
      option('k', l.kernel);
      if (l.pad) option('p', l.pad);
      if (l.stride != 1) option('s', l.stride);
      break;
    case LayerKind::MaxPool:
    case LayerKind::AvgPool:
      option(l.kind == LayerKind::MaxPool ? 'm' : 'a', l.kernel);
      if (l.stride != l.kernel) option('s', l.stride);
      break;
    case LayerKind::Flatten: s = "f"; break;
    case LayerKind::BatchNorm: s = "bn"; break;
    case LayerKind::Dropout: {
      char text[32];  // the shortest decimal that reads back as p
      s = "d" + std::string(text, std::to_chars(text, text + sizeof text, l.p).ptr);
      break;
    }
  }
  return s + act_letter(l);
}

std::string describe(const ModelSpec& spec) {
  const Shape& in = spec.input;
  std::string s = in.image ? std::to_string(in.h) + "x" + std::to_string(in.w) + "x" + std::to_string(in.c)
                           : std::to_string(in.c);
  for (auto& l : spec.layers) {
    s += '-';
    s += describe(l);
  }
  return s;
}

std::vector<Shape> layer_shapes(const ModelSpec& spec) {
  try {
    return shapes_or_throw(spec);
  } catch (const ConfigError& e) {
    throw ConfigError("model \"" + describe(spec) + "\": " + e.what());
  }
}

ModelSpec parse_model(const std::string& s) {
  ModelSpec spec;
  std::stringstream in(s);
  std::string part;
  size_t index = 0;
  while (std::getline(in, part, '-')) {
    try {
      if (part.empty()) throw ConfigError("empty");
      if (index == 0) spec.input = parse_input(part);
      else spec.layers.push_back(parse_layer(part));
    } catch (const ConfigError& e) {
      throw ConfigError("model \"" + s + "\": " +
                        (index == 0 ? std::string("input") : "layer " + std::to_string(index)) + " \"" + part +
                        "\": " + e.what());
    }
    ++index;
  }
  if (!s.empty() && s.back() == '-') throw ConfigError("model \"" + s + "\": empty layer at the end");
  if (index == 0) throw ConfigError("model \"\": empty");
  try {
    shapes_or_throw(spec);
  } catch (const ConfigError& e) {
    throw ConfigError("model \"" + s + "\": " + e.what());
  }
  return spec;
}

}  // namespace vkamp::models
