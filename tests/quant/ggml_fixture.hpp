// tests/quant/fixtures/ggml_blocks.bin.gz (written by make_fixtures.py from
// ggml's own quantizer and dequantizers): input rows, and per ggml type
// ggml's blocks of each row, its dequantization of them, and random blocks
// with ggml's dequantization. Shared by the host and GPU tests.
#pragma once
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "vkamp/quant/ggml_type.hpp"

namespace vkamp::test {

// Every type vkamp reads, in ggml's id order.
constexpr quant::GgmlType kAllGgmlTypes[] = {
    quant::GgmlType::F32,  quant::GgmlType::F16,  quant::GgmlType::BF16, quant::GgmlType::Q4_0,
    quant::GgmlType::Q4_1, quant::GgmlType::Q5_0, quant::GgmlType::Q5_1, quant::GgmlType::Q8_0,
    quant::GgmlType::Q4_K, quant::GgmlType::Q5_K, quant::GgmlType::Q6_K};

struct GgmlTypeFixture {
  quant::GgmlType type;
  std::vector<std::vector<uint8_t>> blocks;   // ggml's quantization of each input row
  std::vector<std::vector<float>> dequantized;  // ggml's dequantization of `blocks`
  std::vector<uint8_t> random_blocks;           // random bytes, finite scales
  std::vector<float> random_dequantized;        // ggml's dequantization of them
};

struct GgmlFixture {
  uint32_t values = 0;  // per row
  std::vector<std::vector<float>> rows;
  std::vector<GgmlTypeFixture> types;
};

inline GgmlFixture load_ggml_fixture() {
  const std::string path = std::string(VKAMP_QUANT_FIXTURES) + "/ggml_blocks.bin.gz";
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path);
  std::vector<uint8_t> bytes;
  uint8_t chunk[65536];
  for (int got; (got = gzread(f, chunk, sizeof chunk)) > 0;) bytes.insert(bytes.end(), chunk, chunk + got);
  gzclose(f);
  size_t at = 0;
  auto take = [&](void* dst, size_t n) {
    if (at + n > bytes.size()) throw std::runtime_error(path + " is truncated");
    std::memcpy(dst, bytes.data() + at, n);
    at += n;
  };
  auto u32 = [&] {
    uint32_t v;
    take(&v, 4);
    return v;
  };
  auto floats = [&](size_t n) {
    std::vector<float> v(n);
    take(v.data(), n * 4);
    return v;
  };
  auto raw = [&](size_t n) {
    std::vector<uint8_t> v(n);
    take(v.data(), n);
    return v;
  };
  char magic[4];
  take(magic, 4);
  if (std::memcmp(magic, "VKQF", 4) != 0 || u32() != 1) throw std::runtime_error(path + ": not a version-1 fixture");
  GgmlFixture fx;
  const uint32_t nrows = u32();
  fx.values = u32();
  for (uint32_t r = 0; r < nrows; ++r) fx.rows.push_back(floats(fx.values));
  const uint32_t ntypes = u32();
  for (uint32_t t = 0; t < ntypes; ++t) {
    GgmlTypeFixture tf;
    tf.type = quant::GgmlType(u32());
    const uint32_t row_bytes = u32();
    for (uint32_t r = 0; r < nrows; ++r) tf.blocks.push_back(raw(row_bytes));
    for (uint32_t r = 0; r < nrows; ++r) tf.dequantized.push_back(floats(fx.values));
    tf.random_blocks = raw(row_bytes);
    tf.random_dequantized = floats(fx.values);
    fx.types.push_back(std::move(tf));
  }
  if (at != bytes.size()) throw std::runtime_error(path + " has trailing bytes");
  return fx;
}

// Float arrays as bit patterns, so NaNs and signed zeros compare exactly.
inline std::vector<uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * 4);
  return b;
}

}  // namespace vkamp::test
