// The shape of one example's activations (the batch is the leading axis,
// outside the shape): an image h x w x c in NHWC order, or a flat vector of
// c features (h = w = 1, image = false).
#pragma once
#include <cstdint>
#include <string>

namespace vkamp::graph {

struct Shape {
  uint32_t h = 1, w = 1, c = 0;
  bool image = false;

  static Shape vector(uint32_t features) { return {1, 1, features, false}; }
  static Shape picture(uint32_t h, uint32_t w, uint32_t c) { return {h, w, c, true}; }

  uint32_t elements() const { return h * w * c; }
  bool operator==(const Shape&) const = default;
};

// "784" or "28x28x1".
std::string to_string(const Shape& s);

}  // namespace vkamp::graph
