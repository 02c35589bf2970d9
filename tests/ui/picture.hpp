// Reading the dashboard's PNGs back for tests: pixels near a colour inside
// a rectangle, and the rectangles the plots reported.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vkamp::test {

struct Picture {
  int width = 0, height = 0;
  std::vector<uint8_t> rgba;
  static Picture load(const std::string& path);  // empty on failure
  bool empty() const { return rgba.empty(); }
  // Pixels in [x0,x1) x [y0,y1) within `tolerance` (per channel) of r,g,b.
  size_t count_near(float x0, float y0, float x1, float y1, uint8_t r, uint8_t g, uint8_t b,
                    int tolerance = 24) const;
  // Distinct colours in the rectangle (a blank area has one or two).
  size_t distinct_colours(float x0, float y0, float x1, float y1) const;
};

}  // namespace vkamp::test
