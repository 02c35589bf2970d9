// The GEMM tuner (ops/gemm_tuner.hpp): the candidates a device fits, kernel
// names and product classes, the cache file's round trip, corrupt and
// foreign files (the driver version among the key), the compiled-in
// defaults, and on a device (the tensor-core tiling emulated, so any device
// runs it): a cache file deciding the kernel, a bad one warned about once,
// and a run tuned on first use giving the bits of its kernel run directly.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "vkamp/knobs.hpp"
#include "vkamp/measure.hpp"
#include "vkamp/ops/gemm_tuner.hpp"
#include "vkamp/sequence.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::test {
namespace {

using ops::GemmKernel;

DeviceInfo limits(uint32_t shared, uint32_t invocations) {
  DeviceInfo d;
  d.max_shared_memory = shared;
  d.max_workgroup_invocations = invocations;
  d.vendor_id = 0x10de, d.device_id = 0x2330, d.driver_version = 0x91d8c000;
  return d;
}

bool has(const std::vector<GemmKernel>& all, const char* name) {
  for (const GemmKernel& k : all)
    if (k.name() == name) return true;
  return false;
}

TEST(GemmCandidates, EveryShapeThatFitsAndTheShaderFirst) {
  const auto unlimited = ops::gemm_candidates(limits(1u << 20, 1024), 32);
  ASSERT_EQ(unlimited.size(), 33u) << "the shader GEMM and 2 x 4 x 2 x 2 shapes";
  EXPECT_FALSE(unlimited[0].mma);
  for (size_t i = 0; i < unlimited.size(); ++i) {
    EXPECT_EQ(GemmKernel::parse(unlimited[i].name()), unlimited[i]) << unlimited[i].name();
    for (size_t j = 0; j < i; ++j) EXPECT_NE(unlimited[i].name(), unlimited[j].name());
  }
  // 48 KiB (an H100): the 128 x 128 tile double-buffered at BK 32
  // (2 x (128 x 40 + 32 x 136) halves + 8 KiB) fits; at BK 64 it does not.
  const auto h100 = ops::gemm_candidates(limits(49152, 1024), 32);
  EXPECT_TRUE(has(h100, "mma-w8-f2x4-k32-db"));
  EXPECT_FALSE(has(h100, "mma-w8-f2x4-k64-db"));
  // 32 KiB (lavapipe): single-buffered only.
  const auto lvp = ops::gemm_candidates(limits(32768, 1024), 32);
  EXPECT_TRUE(has(lvp, "mma-w8-f2x4-k32-sb"));
  EXPECT_FALSE(has(lvp, "mma-w8-f2x4-k32-db"));
  // 128 invocations (Vulkan's minimum): 4 warps of 32, not 8.
  for (const GemmKernel& k : ops::gemm_candidates(limits(1u << 20, 128), 32))
    EXPECT_TRUE(!k.mma || k.shape.warps == 4) << k.name();
}

TEST(GemmKernelName, RefusesWhatTheFamilyDoesNotHave) {
  EXPECT_EQ(GemmKernel::parse("shader"), GemmKernel{});
  const auto k = GemmKernel::parse("mma-w8-f4x2-k64-db");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->shape, (ops::GemmMmaShape{8, 4, 2, 64, true}));
  for (const char* bad : {"", "Shader", "shader ", "mma-w6-f2x2-k32-sb", "mma-w4-f3x2-k32-sb", "mma-w4-f4x4-k32-sb",
                          "mma-w4-f2x2-k48-sb", "mma-w4-f2x2-k32-xx", "mma-w04-f2x2-k32-sb", "mma-w4-f2x2-k32-sbx",
                          "mma-w4-f2x2-k32"})
    EXPECT_FALSE(GemmKernel::parse(bad)) << '"' << bad << '"';
}

TEST(GemmKernelName, TheShaderGemmsPaths) {
  for (const char* name : {"shader", "shader-tiled", "shader-direct", "shader-direct-16x8", "shader-direct-1x16"}) {
    const auto k = GemmKernel::parse(name);
    ASSERT_TRUE(k) << name;
    EXPECT_FALSE(k->mma);
    EXPECT_EQ(k->name(), name);
  }
  EXPECT_EQ(GemmKernel::parse("shader-tiled")->tiled, true);
  EXPECT_EQ(GemmKernel::parse("shader-direct-16x8")->block, (std::pair{16u, 8u}));
  for (const char* bad : {"shader-", "shader-direct-", "shader-direct-0x8", "shader-direct-17x8", "shader-direct-08x8",
                          "shader-direct-8x8x", "shader-direct-8", "shader-tiled-8x8", "shader-direct-8x8 "})
    EXPECT_FALSE(GemmKernel::parse(bad)) << '"' << bad << '"';
}

// The paths a B in blocks may take: never a tensor-core kernel, each named
// once, the device type's own path first (a short budget times it).
TEST(GemmQuantCandidates, EveryPathOnceTheDeviceTypesFirst) {
  DeviceInfo cpu = limits(32768, 1024), gpu = limits(49152, 1024);
  cpu.type = VK_PHYSICAL_DEVICE_TYPE_CPU;
  gpu.type = VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
  for (const DeviceInfo& d : {cpu, gpu}) {
    const auto all = ops::gemm_quant_candidates(d);
    ASSERT_EQ(all.size(), 5u);
    for (size_t i = 0; i < all.size(); ++i) {
      EXPECT_FALSE(all[i].mma);
      EXPECT_EQ(GemmKernel::parse(all[i].name()), all[i]) << all[i].name();
      for (size_t j = 0; j < i; ++j) EXPECT_NE(all[i].name(), all[j].name());
    }
  }
  EXPECT_EQ(ops::gemm_quant_candidates(cpu)[0].name(), "shader-direct-16x8");
  EXPECT_EQ(ops::gemm_quant_candidates(gpu)[0].name(), "shader-tiled");
}

TEST(GemmClass, BucketsTransposesAndBatches) {
  EXPECT_EQ(ops::gemm_class({.m = 16384, .n = 384, .k = 1536, .trans_b = true}), "nt:X.M.L");
  EXPECT_EQ(ops::gemm_class({.m = 384, .n = 1536, .k = 16384, .trans_a = true}), "tn:M.L.X");
  EXPECT_EQ(ops::gemm_class({.m = 128, .n = 129, .k = 2049}), "nn:S.M.X");
  EXPECT_EQ(ops::gemm_class({.m = 64, .n = 64, .k = 64, .trans_a = true, .trans_b = true, .batch = 384}), "tt:X.S.S")
      << "a batch counts along m";
  for (const char* t : {"nn", "nt", "tn", "tt"})
    for (char m : std::string("SMLX"))
      for (char n : std::string("SMLX"))
        for (char k : std::string("SMLX")) {
          const std::string cls = std::string(t) + ":" + m + "." + n + "." + k;
          ASSERT_TRUE(ops::gemm_class_valid(cls));
          EXPECT_EQ(ops::gemm_class(ops::gemm_class_example(cls)), cls);
        }
  for (const char* bad : {"", "nt", "nt:X.X", "nx:X.X.X", "nt:X.X.Y", "nt:XX.X.X", "nt:X.X.X."})
    EXPECT_FALSE(ops::gemm_class_valid(bad)) << bad;
  EXPECT_TRUE(ops::gemm_class_matches("*", "nt:X.M.L"));
  EXPECT_TRUE(ops::gemm_class_matches("*:X.*.*", "nt:X.M.L"));
  EXPECT_FALSE(ops::gemm_class_matches("*:S.*.*", "nt:X.M.L"));
  EXPECT_FALSE(ops::gemm_class_matches("nn:*.*.*", "nt:X.M.L"));
}

// A B in ggml blocks is a class of its own per block type: the compiled-in
// rows, written for fp16 B, never match it.
TEST(GemmClass, ABInBlocksNamesItsType) {
  using quant::GgmlType;
  EXPECT_EQ(ops::gemm_class({.m = 32, .n = 5632, .k = 2048, .trans_b = true, .b_blocks = GgmlType::Q4_K}),
            "nt:S.X.L:q4_k");
  EXPECT_EQ(ops::gemm_class({.m = 32, .n = 2048, .k = 5632, .b_blocks = GgmlType::Q8_0}), "nn:S.L.X:q8_0");
  for (const char* cls : {"nt:S.X.L:q4_k", "nn:M.L.X:q6_k", "nt:X.M.M:q5_1"}) {
    ASSERT_TRUE(ops::gemm_class_valid(cls)) << cls;
    const ops::Gemm g = ops::gemm_class_example(cls);
    EXPECT_TRUE(g.b_blocks) << cls;
    EXPECT_EQ(ops::gemm_class(g), cls);
    EXPECT_FALSE(ops::gemm_class_matches("*:S.*.*", cls));
  }
  for (const char* bad : {"nt:S.X.L:", "nt:S.X.L:f16", "nt:S.X.L:Q4_K", "nt:S.X.L:q4_k:q4_k", "nt:S.X.L:iq2_xs",
                          "nt:S.X.L.q4_k", "nt:S.X:q4_k"})
    EXPECT_FALSE(ops::gemm_class_valid(bad)) << bad;
}

// No GPU has timed the family yet: with no tuning on the device, every
// class of every vendor stays on the shader GEMM under VKAMP_COOPMAT=auto
// (the bits of a run without tensor cores), and VKAMP_COOPMAT=1 runs a
// tensor-core shape.
TEST(GemmDefaults, TheShaderGemmForEveryClassUntilAGpuMeasuresOtherwise) {
  for (uint32_t vendor : {0x10deu, 0x1002u, 0x8086u, 0x10005u, 0u})
    for (const char* t : {"nn", "nt", "tn", "tt"})
      for (char m : std::string("SMLX"))
        for (char n : std::string("SMLX"))
          for (char k : std::string("SMLX")) {
            const std::string cls = std::string(t) + ":" + m + "." + n + "." + k;
            const ops::GemmChoice c = ops::gemm_default_choice(vendor, cls);
            EXPECT_FALSE(c.winner.mma) << std::hex << vendor << " " << cls << ": " << c.winner.name();
            EXPECT_TRUE(c.best_mma.mma) << std::hex << vendor << " " << cls;
          }
  // VKAMP_COOPMAT=1 on NVIDIA: the measured reference's structure for large
  // products, 64 x 64 tiles for small ones.
  EXPECT_EQ(ops::gemm_default_choice(0x10de, "nt:X.X.X").best_mma.name(), "mma-w8-f2x4-k32-sb");
  EXPECT_EQ(ops::gemm_default_choice(0x10de, "nn:S.X.X").best_mma.name(), "mma-w4-f2x2-k32-sb");
}

TEST(GemmMmaPlanSplit, SlicesOfWholeStepsAndNoneWithAKRange) {
  const ops::GemmMmaShape shape{4, 2, 2, 64, false};
  const auto dw = ops::gemm_mma_plan({.m = 6, .n = 25, .k = 4099, .trans_a = true}, shape);
  EXPECT_GT(dw.splits, 1u);
  EXPECT_EQ(dw.k_chunk % 64, 0u) << "slices start on a staged step";
  EXPECT_GE(uint64_t(dw.splits) * dw.k_chunk, 4099u) << "every k is in a slice";
  EXPECT_LT(uint64_t(dw.splits - 1) * dw.k_chunk, 4099u) << "no slice is empty";
  EXPECT_EQ(ops::gemm_mma_plan({.m = 6, .n = 25, .k = 4099, .k_range = ops::KRange::up_to_row}, shape).splits, 1u);
  EXPECT_EQ(ops::gemm_mma_plan({.m = 4096, .n = 4096, .k = 4096}, shape).splits, 1u);
}

ops::GemmTuneTable sample_table() {
  ops::GemmTuneTable t;
  t["nt:X.M.L"] = {*GemmKernel::parse("shader"), *GemmKernel::parse("mma-w8-f2x4-k32-sb"), 1.5, 2.25};
  t["tn:M.L.X"] = {*GemmKernel::parse("mma-w4-f1x2-k64-db"), *GemmKernel::parse("mma-w4-f1x2-k64-db"), 0.125, 0.125};
  t["nt:S.X.L:q4_k"] = {*GemmKernel::parse("shader-direct-8x16"), GemmKernel{}, 375.5, 0};
  t["nn:S.L.X:q8_0"] = {*GemmKernel::parse("shader-tiled"), GemmKernel{}, 12, 0};
  return t;
}

TEST(GemmTuneFile, RoundTrip) {
  const DeviceInfo d = limits(49152, 1024);
  const auto key = ops::gemm_tune_key(d);
  std::string why;
  const auto back = ops::parse_tune_file(ops::format_tune_file(key, sample_table()), key, d, 32, why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(*back, sample_table());
  const auto empty = ops::parse_tune_file(ops::format_tune_file(key, {}), key, d, 32, why);
  ASSERT_TRUE(empty) << why;
  EXPECT_TRUE(empty->empty());
}

TEST(GemmTuneFile, CorruptFilesAreRefused) {
  const DeviceInfo d = limits(49152, 1024);
  const auto key = ops::gemm_tune_key(d);
  const std::string good = ops::format_tune_file(key, sample_table());
  const std::string head = good.substr(0, good.find("nt:X.M.L"));
  const char* rows[] = {
      "nt:X.M.L shader 1.5 mma-w8-f2x4-k32-sb\n",          // a field short
      "nt:X.M.L shader 1.5 mma-w8-f2x4-k32-sb 2 x\n",      // a field over
      "nt:X.M shader 1.5 mma-w8-f2x4-k32-sb 2\n",          // not a class
      "nt:X.M.L mma-w9-f2x4-k32-sb 1.5 mma-w8-f2x4-k32-sb 2\n",  // not a kernel
      "nt:X.M.L mma-w8-f2x4-k32-sb 1.5 shader 2\n",        // best-mma not an mma
      "nt:X.M.L shader -1 mma-w8-f2x4-k32-sb 2\n",         // a negative time
      "nt:X.M.L shader nan mma-w8-f2x4-k32-sb 2\n",        // not a time
      "nt:X.M.L shader 1 mma-w8-f2x4-k64-db 2\n",          // does not fit the device
      "nt:X.M.L shader 1 mma-w8-f2x4-k32-sb 2\nnt:X.M.L shader 1 mma-w8-f2x4-k32-sb 2\n",  // twice
      "nt:X.M.L shader 1.5 - 0\n",                                // no best mma for fp16 B
      "nt:S.X.L:q4_k mma-w8-f2x4-k32-sb 1 - 0\n",              // blocks on a tensor-core kernel
      "nt:S.X.L:q4_k shader 1 mma-w8-f2x4-k32-sb 2\n",         // a best mma for blocks
      "nt:S.X.L:q4_k shader-direct-17x8 1 - 0\n",              // not a path
  };
  std::string why;
  for (const char* row : rows) {
    EXPECT_FALSE(ops::parse_tune_file(head + row, key, d, 32, why)) << row;
    EXPECT_EQ(why.rfind("corrupt: ", 0), 0u) << why;
  }
  for (const std::string& text : {std::string(), std::string("garbage\n"), good.substr(0, good.find('\n') + 1),
                                  "vkamp-gemm-tune 2\n" + good.substr(good.find('\n') + 1)}) {
    EXPECT_FALSE(ops::parse_tune_file(text, key, d, 32, why)) << text;
    EXPECT_EQ(why.rfind("corrupt: ", 0), 0u) << why;
  }
}

// Another driver version, device or vkamp: the timings are not this
// device's, whatever else the file holds.
TEST(GemmTuneFile, ForeignKeysAreRefused) {
  const DeviceInfo d = limits(49152, 1024);
  const std::string text = ops::format_tune_file(ops::gemm_tune_key(d), sample_table());
  DeviceInfo new_driver = d, other_device = d;
  new_driver.driver_version += 1;
  other_device.device_id += 1;
  ops::GemmTuneKey other_vkamp = ops::gemm_tune_key(d);
  other_vkamp.vkamp += ".1";
  for (const ops::GemmTuneKey& key : {ops::gemm_tune_key(new_driver), ops::gemm_tune_key(other_device), other_vkamp}) {
    std::string why;
    EXPECT_FALSE(ops::parse_tune_file(text, key, d, 32, why));
    EXPECT_EQ(why.rfind("foreign: ", 0), 0u) << why;
  }
}

// A context of its own with the tensor-core tiling emulated, its tuner
// reading a cache directory of this test's.
class GemmTunerOnDevice : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (ctx().path() != PrecisionPath::Fp16Arithmetic) GTEST_SKIP() << "the tensor-core GEMM needs shaderFloat16";
    dir_ = std::filesystem::temp_directory_path() / ("vkamp-tune-" + std::to_string(vkamp::platform::process_id()));
    std::filesystem::remove_all(dir_);
    cache_home_.emplace(vkamp::platform::cache_home_variable(), vkamp::platform::utf8_from_path(dir_).c_str());
  }
  void TearDown() override {
    cache_home_.reset();
    std::filesystem::remove_all(dir_);
    GpuTest::TearDown();
  }
  std::unique_ptr<Context> emulated_context(std::optional<GemmTuneMode> tune = {}) {
    ContextOptions opt;
    opt.validation = ctx().validation();
    opt.paths.gemm_mma = GemmMma::emulated;
    opt.paths.gemm_tune = tune;
    return std::make_unique<Context>(opt);
  }
  void write_cache(const std::string& text) {
    const std::string path = ops::gemm_tune_path(ctx().info());
    std::filesystem::create_directories(vkamp::platform::path_from_utf8(path).parent_path());
    std::ofstream(vkamp::platform::path_from_utf8(path), std::ios::binary) << text;  // as vkamp writes it: LF
  }
  // g on `c`'s own choice (ops::gemm), C as stored.
  std::vector<float> run_gemm(Context& c, const ops::Gemm& g, const std::vector<float>& a, const std::vector<float>& b,
                              const GemmKernel* direct = nullptr) {
    return run_on(c, g, upload(c, Format::F16, a), upload(c, Format::F16, b), direct);
  }
  // g with B in blocks of random values (the same bytes in every context).
  std::vector<float> run_blocks(Context& c, const ops::Gemm& g, const GemmKernel* direct = nullptr) {
    std::mt19937 gen(29);
    Buffer a = random_buffer(c, Format::F16, size_t(g.m) * g.k, gen);
    return run_on(c, g, std::move(a), random_blocks(c, *g.b_blocks, size_t(g.k) * g.n, gen), direct);
  }
  std::vector<float> run_on(Context& c, const ops::Gemm& g, Buffer a, Buffer b, const GemmKernel* direct) {
    Buffer out = poisoned(c, Format::F16, size_t(g.m) * g.n);
    Sequence seq(c);
    seq.begin();
    if (direct) ops::gemm_with(seq, Format::F16, g, *direct, a, b, out);
    else ops::gemm(seq, Format::F16, g, a, b, out);
    seq.end();
    seq.run();
    return download(out, Format::F16, size_t(g.m) * g.n);
  }

  std::filesystem::path dir_;
  std::optional<ScopedEnv> cache_home_;
};

TEST_F(GemmTunerOnDevice, TheCacheFileDecidesTheKernel) {
  const ops::Gemm g{.m = 96, .n = 80, .k = 48, .trans_b = true};
  ops::GemmTuneTable table;
  table[ops::gemm_class(g)] = {GemmKernel{}, *GemmKernel::parse("mma-w4-f1x2-k32-db"), 1, 1};
  write_cache(ops::format_tune_file(ops::gemm_tune_key(ctx().info()), table));
  auto c = emulated_context();
  EXPECT_TRUE(ops::gemm_tuner(*c).warning().empty()) << ops::gemm_tuner(*c).warning();
  EXPECT_EQ(ops::gemm_tuner(*c).choose(Format::F16, g).name(), "mma-w4-f1x2-k32-db")
      << "VKAMP_COOPMAT=emulate runs the best tensor-core shape";
  const auto used = ops::gemm_tuner(*c).used();
  ASSERT_EQ(used.size(), 1u);
  EXPECT_EQ(used[0].source, "cache");
  EXPECT_EQ(ops::gemm_tuner(*c).choose(Format::F32, g).name(), "shader") << "fp32 never takes the tensor-core GEMM";
}

TEST_F(GemmTunerOnDevice, CorruptOrForeignFilesWarnOnceAndAreIgnored) {
  const ops::Gemm g{.m = 96, .n = 80, .k = 48};
  ops::GemmTuneKey foreign = ops::gemm_tune_key(ctx().info());
  foreign.driver += 1;
  ops::GemmTuneTable table;
  table[ops::gemm_class(g)] = {GemmKernel{}, *GemmKernel::parse("mma-w4-f1x2-k32-db"), 1, 1};
  for (const std::string& text : {std::string("vkamp-gemm-tune 1\nkey nonsense\n"), ops::format_tune_file(foreign, table)}) {
    write_cache(text);
    ::testing::internal::CaptureStderr();
    auto c = emulated_context();
    const GemmKernel k = ops::gemm_tuner(*c).choose(Format::F16, g);
    ops::gemm_tuner(*c).choose(Format::F16, {.m = 500, .n = 80, .k = 48});
    const std::string err = ::testing::internal::GetCapturedStderr();
    size_t warnings = 0;
    for (size_t at = err.find("ignoring the GEMM tuning cache"); at != std::string::npos;
         at = err.find("ignoring the GEMM tuning cache", at + 1))
      ++warnings;
    EXPECT_EQ(warnings, 1u) << err;
    EXPECT_FALSE(ops::gemm_tuner(*c).warning().empty());
    EXPECT_EQ(k, ops::gemm_default_choice(ctx().info().vendor_id, ops::gemm_class(g)).best_mma)
        << "the compiled-in choice, not the file's";
    EXPECT_EQ(ops::gemm_tuner(*c).used()[0].source, "default");
  }
}

// VKAMP_GEMM_TUNE=on: a class missing from the cache is timed on first use
// and saved; that run, a later run reading the cache, and its kernel run
// directly give the same bits.
TEST_F(GemmTunerOnDevice, ATunedRunGivesTheBitsOfItsKernelRunDirectly) {
  const ops::Gemm g{.m = 72, .n = 40, .k = 56, .trans_a = true, .alpha = 0.5f};
  const auto a = random_values(size_t(g.m) * g.k, -1, 1, Format::F16);
  const auto b = random_values(size_t(g.k) * g.n, -1, 1, Format::F16);
  std::vector<float> tuned;
  std::string kernel;
  {
    auto c = emulated_context(GemmTuneMode::on);
    tuned = run_gemm(*c, g, a, b);
    const auto used = ops::gemm_tuner(*c).used();
    ASSERT_EQ(used.size(), 1u);
    EXPECT_EQ(used[0].source, "tuned");
    kernel = used[0].kernel;
  }
  std::ifstream saved(ops::gemm_tune_path(ctx().info()));
  ASSERT_TRUE(saved) << "the tuned class was not saved";
  auto c = emulated_context();
  const auto cached = run_gemm(*c, g, a, b);
  ASSERT_EQ(ops::gemm_tuner(*c).used().size(), 1u);
  EXPECT_EQ(ops::gemm_tuner(*c).used()[0].source, "cache");
  EXPECT_EQ(ops::gemm_tuner(*c).used()[0].kernel, kernel);
  const GemmKernel k = *GemmKernel::parse(kernel);
  const auto direct = run_gemm(*c, g, a, b, &k);
  ASSERT_EQ(tuned.size(), direct.size());
  EXPECT_EQ(0, std::memcmp(tuned.data(), direct.data(), tuned.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(cached.data(), direct.data(), cached.size() * sizeof(float)));
  EXPECT_FALSE(std::isnan(direct[0])) << "the kernel wrote C";
}

// A B in blocks: the cache names its path per class and block type, the
// run gives that path's bits; VKAMP_GEMM_TILED overrides the cache.
TEST_F(GemmTunerOnDevice, TheCacheFileDecidesABlocksPath) {
  const ops::Gemm g{.m = 40, .n = 48, .k = 512, .trans_b = true, .b_blocks = quant::GgmlType::Q4_K};
  const GemmKernel pick = *GemmKernel::parse("shader-direct-4x4");
  ops::GemmTuneTable table;
  table[ops::gemm_class(g)] = {pick, GemmKernel{}, 1, 0};
  write_cache(ops::format_tune_file(ops::gemm_tune_key(ctx().info()), table));
  auto c = emulated_context();
  const auto got = run_blocks(*c, g);
  ASSERT_EQ(ops::gemm_tuner(*c).used().size(), 1u);
  EXPECT_EQ(ops::gemm_tuner(*c).used()[0].cls, "nt:S.S.M:q4_k");
  EXPECT_EQ(ops::gemm_tuner(*c).used()[0].kernel, "shader-direct-4x4");
  EXPECT_EQ(ops::gemm_tuner(*c).used()[0].source, "cache");
  const auto direct = run_blocks(*c, g, &pick);
  EXPECT_EQ(0, std::memcmp(got.data(), direct.data(), got.size() * sizeof(float)));
  EXPECT_EQ(ops::gemm_tuner(*c).choose(Format::F16, {.m = 40, .n = 48, .k = 512, .trans_b = true,
                                                     .b_blocks = quant::GgmlType::Q8_0}).name(),
            "shader")
      << "another block type is another class: not in the cache, the device type's path";

  ContextOptions opt;
  opt.validation = ctx().validation();
  opt.paths.gemm_tiled = true;
  Context tiled(opt);
  EXPECT_EQ(ops::gemm_tuner(tiled).choose(Format::F16, g).name(), "shader");
  EXPECT_EQ(ops::gemm_tuner(tiled).used()[0].source, "VKAMP_GEMM_TILED/_BLOCK");
}

// VKAMP_GEMM_TUNE=on times a blocks class's paths on first use and saves
// the winner; a later run reads it, and both give its path's bits.
TEST_F(GemmTunerOnDevice, ATunedBlocksClassGivesTheBitsOfItsPathRunDirectly) {
  const ops::Gemm g{.m = 24, .n = 512, .k = 40, .b_blocks = quant::GgmlType::Q6_K};
  std::vector<float> tuned;
  std::string kernel;
  {
    auto c = emulated_context(GemmTuneMode::on);
    tuned = run_blocks(*c, g);
    const auto used = ops::gemm_tuner(*c).used();
    ASSERT_EQ(used.size(), 1u);
    EXPECT_EQ(used[0].source, "tuned");
    kernel = used[0].kernel;
  }
  const auto k = GemmKernel::parse(kernel);
  ASSERT_TRUE(k) << kernel;
  EXPECT_NE(std::find(ops::gemm_quant_candidates(ctx().info()).begin(),
                      ops::gemm_quant_candidates(ctx().info()).end(), *k),
            ops::gemm_quant_candidates(ctx().info()).end())
      << kernel << " is not one of the blocks' paths";
  auto c = emulated_context();
  const auto cached = run_blocks(*c, g);
  EXPECT_EQ(ops::gemm_tuner(*c).used()[0].source, "cache");
  EXPECT_EQ(ops::gemm_tuner(*c).used()[0].kernel, kernel);
  const auto direct = run_blocks(*c, g, &*k);
  EXPECT_EQ(0, std::memcmp(tuned.data(), direct.data(), tuned.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(cached.data(), direct.data(), cached.size() * sizeof(float)));
  EXPECT_FALSE(std::isnan(direct[0])) << "the kernel wrote C";
}

}  // namespace
}  // namespace vkamp::test
