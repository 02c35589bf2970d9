// The GEMM with B in ggml blocks (gemm.comp's ".quant" build: a quantized
// frozen weight dequantized as it is loaded): a linear layer's forward
// x W^T and its input gradient dY W over every block type, on the direct
// and the tiled path, against a double reference on the dequantized W.
// The dequantization itself is bit for bit ggml's (test_dequantize.cpp),
// so each W value the kernel multiplies is exact in fp32 and the bound is
// the plain GEMM's: k fp32 roundings, then one to the format.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "vkamp/knobs.hpp"
#include "shaders/gemm_reference.hpp"
#include "vkamp/error.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/ops/gemm_kernel.hpp"
#include "vkamp/quant/dequantize.hpp"
#include "vkamp/quant/quantize.hpp"

namespace vkamp::test {
namespace {

using quant::GgmlType;

// W {out, in} quantized by vkamp's (= ggml's) quantizer, its blocks in a
// device buffer (whole words, then a NaN-free tail: blocks past the end
// would read as garbage, not be caught by a NaN) and its exact values.
struct BlockWeight {
  std::vector<uint8_t> blocks;
  std::vector<float> values;
};

BlockWeight block_weight(GgmlType t, uint32_t out, uint32_t in, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0, 0.5f);
  std::vector<float> w(size_t(out) * in);
  for (float& v : w) v = normal(gen);
  BlockWeight b;
  b.blocks.resize(quant::ggml_row_bytes(t, w.size()));
  quant::quantize_row(t, w.data(), b.blocks.data(), w.size());
  b.values.resize(w.size());
  quant::dequantize_row(t, b.blocks.data(), b.values.data(), w.size());
  return b;
}

Buffer upload_blocks(const std::vector<uint8_t>& blocks) {
  std::vector<uint8_t> words((blocks.size() + 3) / 4 * 4, 0);
  std::copy(blocks.begin(), blocks.end(), words.begin());
  Buffer b(ctx(), words.size());
  b.write(words.data(), words.size());
  return b;
}

struct QuantCase {
  GgmlType type;
  Format fmt;
  bool tiled;
};

std::string case_name(const ::testing::TestParamInfo<QuantCase>& info) {
  return std::string(quant::ggml_type_info(info.param.type).name) + "_" + format_name(info.param.fmt) +
         (info.param.tiled ? "_tiled" : "_direct");
}

class GemmQuant : public GpuTest, public ::testing::WithParamInterface<QuantCase> {};

TEST_P(GemmQuant, LinearForwardAndInputGradient) {
  const QuantCase c = GetParam();
  KernelPaths paths;
  paths.gemm_tiled = c.tiled;
  UsePaths use(paths);
  // Rows of 512 are two 256-value K blocks; 37 and 45 leave partial tiles.
  const uint32_t batch = 37, in = 512, out = 45;
  const BlockWeight w = block_weight(c.type, out, in, 7 + uint32_t(c.type));
  const Buffer bw = upload_blocks(w.blocks);

  const auto x = random_values(size_t(batch) * in, -1, 1, c.fmt);
  Buffer bx = guarded_input(c.fmt, x), by = guarded_output(c.fmt, size_t(batch) * out);
  run_once([&](Sequence& seq) { ops::linear_forward(seq, c.fmt, bx, bw, by, batch, in, out, {}, c.type); });
  EXPECT_TRUE(close_to(guarded_result(by, c.fmt, size_t(batch) * out), ref_forward(x, w.values, batch, in, out),
                       gemm_bound(c.fmt, in), smallest_normal(c.fmt)))
      << "forward";

  const auto dy = random_values(size_t(batch) * out, -1, 1, c.fmt);
  Buffer bdy = guarded_input(c.fmt, dy), bdx = guarded_output(c.fmt, size_t(batch) * in);
  run_once([&](Sequence& seq) {
    ops::linear_backward_input(seq, c.fmt, bdy, bw, bdx, batch, in, out, false, {}, c.type);
  });
  EXPECT_TRUE(close_to(guarded_result(bdx, c.fmt, size_t(batch) * in), ref_backward_input(dy, w.values, batch, in, out),
                       gemm_bound(c.fmt, out), smallest_normal(c.fmt)))
      << "input gradient";
}

std::vector<QuantCase> quant_cases() {
  std::vector<QuantCase> cases;
  for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q4_K,
                     GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::F16, GgmlType::BF16})
    for (Format f : {Format::F32, Format::F16}) cases.push_back({t, f, false});
  // The tiled path (GPUs) dequantizes into shared memory: the block types
  // whose layouts differ most.
  for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K}) cases.push_back({t, Format::F16, true});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Shaders, GemmQuant, ::testing::ValuesIn(quant_cases()), case_name);

// A weight in blocks larger than one binding (a real vocabulary's lm_head in
// Q6_K passes lavapipe's 128 MiB): cut into whole rows that fit, C's
// columns in the forward, the shared dimension in the input gradient (one
// more rounding of C per cut), here under a 64 KiB binding.
TEST_F(GpuTest, GemmQuantWeightsPastOneBindingRunInRows) {
  ScopedEnv binding("VKAMP_TEST_MAX_BINDING", "64K");
  ContextOptions opt;
  opt.validation = ctx().validation();
  Context capped(opt);
  ASSERT_EQ(capped.info().max_storage_range, 64u << 10);
  const Format fmt = Format::F32;
  const uint32_t batch = 5, in = 512, out = 301;  // W: 301 rows of 420 bytes, 126 KB
  const BlockWeight w = block_weight(GgmlType::Q6_K, out, in, 11);
  std::vector<uint8_t> words((w.blocks.size() + 3) / 4 * 4, 0);
  std::copy(w.blocks.begin(), w.blocks.end(), words.begin());
  Buffer bw(capped, words.size());
  bw.write(words.data(), words.size());
  const auto x = random_values(size_t(batch) * in, -1, 1, fmt), dy = random_values(size_t(batch) * out, -1, 1, fmt);
  Buffer bx = upload(capped, fmt, x), bdy = upload(capped, fmt, dy);
  Buffer by = poisoned(capped, fmt, size_t(batch) * out), bdx = poisoned(capped, fmt, size_t(batch) * in);
  Sequence seq(capped);
  seq.begin();
  ops::linear_forward(seq, fmt, bx, bw, by, batch, in, out, {}, GgmlType::Q6_K);
  ops::linear_backward_input(seq, fmt, bdy, bw, bdx, batch, in, out, false, {}, GgmlType::Q6_K);
  seq.end();
  seq.run();
  const double cuts = std::ceil(double(words.size()) / (64 << 10));
  EXPECT_TRUE(close_to(download(by, fmt, size_t(batch) * out), ref_forward(x, w.values, batch, in, out),
                       gemm_bound(fmt, in), smallest_normal(fmt)));
  EXPECT_TRUE(close_to(download(bdx, fmt, size_t(batch) * in), ref_backward_input(dy, w.values, batch, in, out),
                       gemm_bound(fmt, out, cuts), smallest_normal(fmt)));
}

// The direct path's forward looks a k-quant's scales up once per group of
// 16 or 32 values along a row; a split-k slice may start inside a group
// (a decoding step: one row of x against a long W row), where it must look
// them up at once.
TEST_F(GpuTest, GemmQuantSlicesStartingInsideAScaleGroup) {
  KernelPaths paths;
  paths.gemm_tiled = false;
  UsePaths use(paths);
  // The smallest W whose plan slices k mid-group (the slices' count follows
  // the workgroups C's columns take).
  const uint32_t batch = 1;
  uint32_t in = 0, out = 0;
  for (uint32_t n = 64; n <= 4096 && in == 0; n += 64)
    for (uint32_t blocks = 2; blocks <= 16 && in == 0; ++blocks) {
      const ops::GemmPlan plan = ops::gemm_plan({.m = batch, .n = n, .k = 256 * blocks, .trans_b = true}, false);
      if (plan.splits > 1 && plan.k_chunk % 16 != 0) in = 256 * blocks, out = n;
    }
  ASSERT_NE(in, 0u) << "no W of whole blocks is sliced mid-group: the case is not reached";
  for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K})
    for (Format fmt : {Format::F32, Format::F16}) {
      const BlockWeight w = block_weight(t, out, in, 13 + uint32_t(t));
      const Buffer bw = upload_blocks(w.blocks);
      const auto x = random_values(size_t(batch) * in, -1, 1, fmt);
      Buffer bx = guarded_input(fmt, x), by = guarded_output(fmt, size_t(batch) * out);
      run_once([&](Sequence& seq) { ops::linear_forward(seq, fmt, bx, bw, by, batch, in, out, {}, t); });
      EXPECT_TRUE(close_to(guarded_result(by, fmt, size_t(batch) * out), ref_forward(x, w.values, batch, in, out),
                           gemm_bound(fmt, in), smallest_normal(fmt)))
          << quant::ggml_type_info(t).name << " " << format_name(fmt) << ", W " << out << " x " << in;
    }
}

// Every path the GEMM tuner may pick for a B in blocks (tiles, and direct
// loads at each block of outputs a thread) computes the same products:
// forward and input gradient against the reference, with partial tiles.
TEST_F(GpuTest, GemmQuantOnEveryTunerCandidate) {
  const uint32_t batch = 37, in = 512, out = 45;
  const Format fmt = Format::F16;
  const auto candidates = ops::gemm_quant_candidates(ctx().info());
  ASSERT_GE(candidates.size(), 5u);
  for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K}) {
    const BlockWeight w = block_weight(t, out, in, 17 + uint32_t(t));
    const Buffer bw = upload_blocks(w.blocks);
    const auto x = random_values(size_t(batch) * in, -1, 1, fmt), dy = random_values(size_t(batch) * out, -1, 1, fmt);
    const auto want_y = ref_forward(x, w.values, batch, in, out), want_dx = ref_backward_input(dy, w.values, batch, in, out);
    for (const ops::GemmKernel& k : candidates) {
      Buffer bx = guarded_input(fmt, x), by = guarded_output(fmt, size_t(batch) * out);
      Buffer bdy = guarded_input(fmt, dy), bdx = guarded_output(fmt, size_t(batch) * in);
      run_once([&](Sequence& seq) {
        ops::gemm_with(seq, fmt, {.m = batch, .n = out, .k = in, .trans_b = true, .b_blocks = t}, k, bx, bw, by);
        ops::gemm_with(seq, fmt, {.m = batch, .n = in, .k = out, .b_blocks = t}, k, bdy, bw, bdx);
      });
      EXPECT_TRUE(close_to(guarded_result(by, fmt, size_t(batch) * out), want_y, gemm_bound(fmt, in),
                           smallest_normal(fmt)))
          << quant::ggml_type_info(t).name << " forward on " << k.name();
      EXPECT_TRUE(close_to(guarded_result(bdx, fmt, size_t(batch) * in), want_dx, gemm_bound(fmt, out),
                           smallest_normal(fmt)))
          << quant::ggml_type_info(t).name << " input gradient on " << k.name();
    }
  }
}

TEST_F(GpuTest, GemmQuantRefusesRowsOfPartialBlocks) {
  const Buffer w(ctx(), 4096), x(ctx(), 4096), y(ctx(), 4096);
  EXPECT_THROW(run_once([&](Sequence& seq) {
                 ops::linear_forward(seq, Format::F32, x, w, y, 2, 48, 2, {}, GgmlType::Q8_0);
               }),
               Error);
}

}  // namespace
}  // namespace vkamp::test
