#include "picture.hpp"

#include <stb/stb_image.h>

#include <algorithm>
#include <cstdlib>
#include <unordered_set>

namespace vkamp::test {

Picture Picture::load(const std::string& path) {
  Picture p;
  int channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &p.width, &p.height, &channels, 4);
  if (!data) return p;
  p.rgba.assign(data, data + size_t(p.width) * p.height * 4);
  stbi_image_free(data);
  return p;
}

size_t Picture::count_near(float x0, float y0, float x1, float y1, uint8_t r, uint8_t g, uint8_t b,
                           int tolerance) const {
  size_t n = 0;
  for (int y = std::max(0, int(y0)); y < std::min(height, int(y1)); ++y)
    for (int x = std::max(0, int(x0)); x < std::min(width, int(x1)); ++x) {
      const uint8_t* p = &rgba[(size_t(y) * width + x) * 4];
      if (std::abs(p[0] - r) <= tolerance && std::abs(p[1] - g) <= tolerance && std::abs(p[2] - b) <= tolerance) ++n;
    }
  return n;
}

size_t Picture::distinct_colours(float x0, float y0, float x1, float y1) const {
  std::unordered_set<uint32_t> seen;
  for (int y = std::max(0, int(y0)); y < std::min(height, int(y1)); ++y)
    for (int x = std::max(0, int(x0)); x < std::min(width, int(x1)); ++x) {
      const uint8_t* p = &rgba[(size_t(y) * width + x) * 4];
      seen.insert(uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2]);
    }
  return seen.size();
}

}  // namespace vkamp::test
