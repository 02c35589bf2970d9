// A GGUF file (version 3, metadata only, no tensors) built in memory, for
// tests that need a file with given keys: the little-endian layout of
// ggml's docs/gguf.md, written byte by byte.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace vkamp::test {

class GgufWriter {
 public:
  GgufWriter& string(const std::string& key, const std::string& v) { return add(key, 8, [&] { text(v); }); }
  GgufWriter& u32(const std::string& key, uint32_t v) { return add(key, 4, [&] { le(v, 4); }); }
  GgufWriter& boolean(const std::string& key, bool v) { return add(key, 7, [&] { le(v ? 1 : 0, 1); }); }
  GgufWriter& strings(const std::string& key, const std::vector<std::string>& v) {
    return add(key, 9, [&] {
      le(8, 4), le(v.size(), 8);
      for (const std::string& s : v) text(s);
    });
  }
  GgufWriter& f32s(const std::string& key, const std::vector<float>& v) {
    return add(key, 9, [&] {
      le(6, 4), le(v.size(), 8);
      for (float f : v) {
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        le(bits, 4);
      }
    });
  }
  GgufWriter& i32s(const std::string& key, const std::vector<int32_t>& v) {
    return add(key, 9, [&] {
      le(5, 4), le(v.size(), 8);
      for (int32_t i : v) le(uint32_t(i), 4);
    });
  }

  // The whole file.
  std::string bytes() const {
    std::string head = "GGUF";
    auto put = [&](uint64_t v, int n) {
      for (int i = 0; i < n; ++i) head += char((v >> (8 * i)) & 0xFF);
    };
    put(3, 4), put(0, 8), put(count_, 8);
    return head + body_;
  }

 private:
  template <class F>
  GgufWriter& add(const std::string& key, uint32_t type, F value) {
    text(key), le(type, 4), value();
    ++count_;
    return *this;
  }
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) body_ += char((v >> (8 * i)) & 0xFF);
  }
  void text(const std::string& s) { le(s.size(), 8), body_ += s; }

  std::string body_;
  uint64_t count_ = 0;
};

}  // namespace vkamp::test
