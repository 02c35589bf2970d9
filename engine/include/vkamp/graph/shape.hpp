// The shape of one example's activations (the batch is the leading axis,
// outside the shape): an image h x w x c in NHWC order, a flat vector of c
// features (h = w = 1, image = false), or a sequence of w positions of c
// features each (h = 1, image = false: a transformer's activations, where
// linear and layer_norm act on every position). A sequence of token ids
// (ids = true, c = 1) holds uint32 ids, not values in the storage format:
// only an embedding reads it.
#pragma once
#include <cstdint>
#include <string>

namespace vkamp::graph {

struct Shape {
  uint32_t h = 1, w = 1, c = 0;
  bool image = false;
  bool ids = false;

  static Shape vector(uint32_t features) { return {1, 1, features, false}; }
  static Shape picture(uint32_t h, uint32_t w, uint32_t c) { return {h, w, c, true}; }
  static Shape sequence(uint32_t positions, uint32_t features) { return {1, positions, features, false}; }
  static Shape tokens(uint32_t positions) { return {1, positions, 1, false, true}; }

  uint32_t elements() const { return h * w * c; }
  // Rows of c features per example: 1 for a vector, h x w otherwise.
  uint32_t positions() const { return h * w; }
  bool operator==(const Shape&) const = default;
};

// "784", "28x28x1", "64x128" (a sequence) or "64 ids".
std::string to_string(const Shape& s);

}  // namespace vkamp::graph
