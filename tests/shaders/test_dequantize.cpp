// dequant.glsl's quant_value (through dequantize.comp) against the host's
// dequantize_row bit for bit, every ggml type: on ggml's own blocks and
// random blocks from tests/quant/fixtures (which test_quant checks against
// ggml's floats), and on fresh random blocks: random codes, every fp16
// scale finite (a block in four with subnormal scales), an odd block count
// so the last block ends mid-word; for F16/BF16/F32 every bit pattern,
// inf and NaN included.
#include <cstring>
#include <random>

#include "quant/ggml_fixture.hpp"
#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "vkamp/error.hpp"
#include "vkamp/ops/dequantize.hpp"
#include "vkamp/quant/dequantize.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

using quant::GgmlType;


// Byte offsets of the fp16 scales in a block (ggml-common.h).
std::vector<uint32_t> scale_offsets(GgmlType t) {
  switch (t) {
    case GgmlType::Q4_0: case GgmlType::Q5_0: case GgmlType::Q8_0: return {0};
    case GgmlType::Q4_1: case GgmlType::Q5_1: case GgmlType::Q4_K: case GgmlType::Q5_K: return {0, 2};
    case GgmlType::Q6_K: return {208};
    default: return {};
  }
}

class QuantValue : public GpuTest {
 protected:
  // The GPU's values of the n values in `blocks`, as bits.
  std::vector<uint32_t> gpu(GgmlType t, std::vector<uint8_t> blocks, uint32_t n) {
    blocks.resize((blocks.size() + 3) / 4 * 4, 0xA5);  // whole words; the padding is never read as a value
    Buffer in(ctx(), blocks.size());
    in.write(blocks);
    Buffer out = poisoned(ctx(), Format::F32, n);
    Sequence seq(ctx());
    seq.begin();
    ops::dequantize(seq, t, in, out, n);
    seq.end();
    seq.run();
    std::vector<uint32_t> bits(n);
    out.read(bits.data(), n * 4);
    return bits;
  }

  void expect_as_host(GgmlType t, const std::vector<uint8_t>& blocks) {
    const auto& info = quant::ggml_type_info(t);
    const uint32_t n = uint32_t(blocks.size() / info.block_bytes * info.block_values);
    std::vector<float> host(n);
    quant::dequantize_row(t, blocks.data(), host.data(), n);
    const std::vector<uint32_t> want = bits_of(host), got = gpu(t, blocks, n);
    size_t differ = 0, first = n;
    for (uint32_t i = 0; i < n; ++i)
      if (got[i] != want[i] && differ++ == 0) first = i;
    EXPECT_EQ(differ, 0u) << info.name << ": " << differ << " of " << n << " values differ, first at " << first
                          << " (gpu 0x" << std::hex << (first < n ? got[first] : 0) << ", host 0x"
                          << (first < n ? want[first] : 0) << ")";
  }
};

TEST_F(QuantValue, GgmlFixtureBitForBit) {
  const GgmlFixture fx = load_ggml_fixture();
  for (const GgmlTypeFixture& t : fx.types) {
    std::vector<uint8_t> all;
    for (const auto& row : t.blocks) all.insert(all.end(), row.begin(), row.end());
    all.insert(all.end(), t.random_blocks.begin(), t.random_blocks.end());
    expect_as_host(t.type, all);
  }
}

TEST_F(QuantValue, RandomBlocksBitForBit) {
  std::uniform_int_distribution<int> byte(0, 255), mantissa(0, 1023), exponent(0, 30), sign(0, 1);
  for (GgmlType t : kAllGgmlTypes) {
    const auto& info = quant::ggml_type_info(t);
    // An odd count of blocks: with 34-, 22- or 210-byte blocks the blocks
    // after the first start mid-word.
    const uint32_t nblocks = info.block_values == 1 ? 4099 : info.block_values == 32 ? 129 : 17;
    std::vector<uint8_t> blocks(size_t(nblocks) * info.block_bytes);
    for (uint8_t& b : blocks) b = uint8_t(byte(rng()));
    for (uint32_t b = 0; b < nblocks; ++b)
      for (uint32_t off : scale_offsets(t)) {
        const int e = b % 4 == 0 ? 0 : exponent(rng());  // exponent 0: subnormal (or zero)
        const uint16_t h = uint16_t((sign(rng()) << 15) | (e << 10) | mantissa(rng()));
        std::memcpy(&blocks[size_t(b) * info.block_bytes + off], &h, 2);
      }
    expect_as_host(t, blocks);
  }
}

TEST_F(QuantValue, RefusesPartialBlocksAndShortBuffers) {
  Buffer in(ctx(), 144), out(ctx(), 1024);
  Sequence seq(ctx());
  seq.begin();
  EXPECT_THROW(ops::dequantize(seq, GgmlType::Q4_K, in, out, 100), Error);
  EXPECT_THROW(ops::dequantize(seq, GgmlType::Q4_K, in, out, 512), Error);  // two blocks from one's bytes
  seq.end();
}

}  // namespace
}  // namespace vkamp::test
