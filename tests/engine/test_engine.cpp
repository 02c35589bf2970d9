// The engine core: device selection, the precision path and its fallback,
// buffers, record-once/replay sequences and the commands and barriers they
// count, timestamps, host-wait counting, errors, and leak-free teardown
// under the validation layer.
#include <filesystem>
#include <fstream>

#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "vkamp/error.hpp"
#include "vkamp/ops/scale.hpp"
#include "vkamp/sequence.hpp"
#include "vkamp/shader_registry.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::test {
namespace {

DeviceInfo fake(uint32_t index, const char* name, VkPhysicalDeviceType type, bool storage16 = true) {
  DeviceInfo d;
  d.index = index;
  d.name = name;
  d.type = type;
  d.storage_buffer_16bit = storage16;
  d.compute_queue_family = 0;
  if (!storage16) d.unsupported_reason = "no storageBuffer16BitAccess";
  return d;
}

TEST(DeviceSelection, PrefersADiscreteGpuThenIntegratedThenCpu) {
  std::vector<DeviceInfo> devs = {fake(0, "llvmpipe", VK_PHYSICAL_DEVICE_TYPE_CPU),
                                  fake(1, "Intel UHD", VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU),
                                  fake(2, "NVIDIA H100", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU)};
  EXPECT_EQ(select_device(devs, ""), 2u);
  devs.pop_back();
  EXPECT_EQ(select_device(devs, ""), 1u);
}

TEST(DeviceSelection, SkipsUnusableDevicesByDefault) {
  std::vector<DeviceInfo> devs = {fake(0, "old gpu", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, false),
                                  fake(1, "llvmpipe", VK_PHYSICAL_DEVICE_TYPE_CPU)};
  EXPECT_EQ(select_device(devs, ""), 1u);
}

TEST(DeviceSelection, ByIndexOrCaseInsensitiveName) {
  std::vector<DeviceInfo> devs = {fake(0, "llvmpipe (LLVM 15)", VK_PHYSICAL_DEVICE_TYPE_CPU),
                                  fake(1, "NVIDIA H100 PCIe", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU)};
  EXPECT_EQ(select_device(devs, "0"), 0u);
  EXPECT_EQ(select_device(devs, "nvidia"), 1u);
  EXPECT_EQ(select_device(devs, "LLVMPIPE"), 0u);
}

TEST(DeviceSelection, NoMatchNamesTheDevices) {
  std::vector<DeviceInfo> devs = {fake(0, "llvmpipe", VK_PHYSICAL_DEVICE_TYPE_CPU)};
  try {
    select_device(devs, "radeon");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("llvmpipe"), std::string::npos) << e.what();
  }
  EXPECT_THROW(select_device(devs, "3"), Error);
}

TEST(ShaderRegistry, EveryOpHasEveryFormatVariant) {
  for (const char* op : {"scale", "sumsq", "gemm", "bias_add", "bias_grad", "activation",
                         "softmax_xent", "softmax_xent_grad", "mse_grad"})
    for (const char* v : {"fp32", "fp16", "fp16s", "bf16", "cb16"}) {
      const ShaderCode* s = find_shader(std::string(op) + "." + v);
      ASSERT_NE(s, nullptr) << op << "." << v;
      EXPECT_EQ(s->words[0], 0x07230203u) << "SPIR-V magic";
    }
  EXPECT_EQ(find_shader("no_such_shader"), nullptr);
}

class Engine : public GpuTest {};

TEST_F(Engine, ProbeAgreesWithThePathTaken) {
  const DeviceInfo& d = ctx().info();
  EXPECT_TRUE(d.storage_buffer_16bit);
  EXPECT_EQ(ctx().path(), d.shader_float16 ? PrecisionPath::Fp16Arithmetic : PrecisionPath::Fp16Storage);
  EXPECT_EQ(ctx().variant(Format::F16), d.shader_float16 ? "fp16" : "fp16s");
  EXPECT_EQ(ctx().variant(Format::BF16), "bf16");
  EXPECT_GT(d.subgroup_size, 0u);
}

TEST_F(Engine, BufferRoundTripsAtOffsetsAndRejectsOutOfRange) {
  Buffer b(ctx(), 64);
  std::vector<uint8_t> in(16);
  for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(rng()());
  b.write(in.data(), in.size(), 40);
  std::vector<uint8_t> out(16);
  b.read(out.data(), out.size(), 40);
  EXPECT_EQ(in, out);
  EXPECT_THROW(b.write(in.data(), in.size(), 56), Error);
  EXPECT_THROW(b.read(out.data(), 65), Error);
}

TEST_F(Engine, HostBufferIsMapped) {
  Buffer b(ctx(), 16, Memory::Host);
  EXPECT_TRUE(b.mapped());
}

TEST_F(Engine, RecordedOnceReplayedManyTimes) {
  std::vector<float> x = random_values(100, -1, 1, Format::F32);
  Buffer buf = upload(ctx(), Format::F32, x);
  Sequence seq(ctx());
  seq.begin();
  ops::scale(seq, Format::F32, buf, buf, 100, 2.0f);  // in place: doubles each replay
  seq.end();
  for (int i = 0; i < 3; ++i) seq.run();
  auto out = download(buf, Format::F32, 100);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(out[i], x[i] * 8.0f) << i;
}

// A scope's scratch goes back to the recording when the scope ends, for a
// later scratch() that fits in it (every command waits for the earlier
// ones); outside a scope, or in a parallel group, it stays held.
TEST_F(Engine, ScratchScopeGivesItsBuffersBackForLaterScratch) {
  Sequence seq(ctx());
  seq.begin();
  const Buffer* first = nullptr;
  {
    Sequence::ScratchScope scope(seq);
    first = seq.scratch(1024).buffer;
  }
  const BufferView again = seq.scratch(512);
  EXPECT_EQ(again.buffer, first) << "the freed 1024-byte buffer holds 512";
  EXPECT_EQ(again.bytes, 512u);
  EXPECT_NE(seq.scratch(512).buffer, first) << "taken outside a scope: still held";
  EXPECT_EQ(seq.scratch_bytes(), 1024u + 512u);
  seq.begin_parallel();
  const Buffer* parallel = nullptr;
  {
    Sequence::ScratchScope scope(seq);
    parallel = seq.scratch(256).buffer;
  }
  seq.end_parallel();
  EXPECT_NE(seq.scratch(256).buffer, parallel) << "its group's later commands may still run beside it";
  seq.end();
  seq.begin();
  EXPECT_EQ(seq.scratch_bytes(), 0u) << "a new recording starts with none";
  seq.end();
}

TEST_F(Engine, CountsTheCommandsAndBarriersItRecords) {
  // One dispatch, then two in a parallel group (one barrier, before the
  // group, which must still see the first dispatch's result), a copy and a
  // fill (a barrier each), and end()'s barrier for the host.
  const uint32_t n = 64;
  std::vector<float> x = random_values(n, -1, 1, Format::F32);
  Buffer a = upload(ctx(), Format::F32, x), b(ctx(), 4 * n), c(ctx(), 4 * n), d(ctx(), 4 * n), e(ctx(), 16);
  Sequence seq(ctx());
  seq.begin();
  ops::scale(seq, Format::F32, a, a, n, 2.0f);
  EXPECT_EQ(seq.counts().dispatches, 1u);
  EXPECT_EQ(seq.counts().barriers, 1u);
  seq.begin_parallel();
  ops::scale(seq, Format::F32, a, b, n, 3.0f);
  ops::scale(seq, Format::F32, a, c, n, 5.0f);
  seq.end_parallel();
  EXPECT_EQ(seq.counts().dispatches, 3u);
  EXPECT_EQ(seq.counts().barriers, 2u) << "one barrier before the parallel group, none inside it";
  seq.copy(b, d, 4 * n);
  seq.fill(e, 0x3F800000u);
  seq.end();
  const CommandCounts& k = seq.counts();
  EXPECT_EQ(k.dispatches, 3u);
  EXPECT_EQ(k.barriers, 5u);
  EXPECT_EQ(k.copies, 1u);
  EXPECT_EQ(k.fills, 1u);
  EXPECT_EQ(seq.dispatch_count(), 3u);
  seq.run();
  auto got_b = download(b, Format::F32, n), got_c = download(c, Format::F32, n), got_d = download(d, Format::F32, n);
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(got_b[i], x[i] * 6.0f) << i;
    EXPECT_EQ(got_c[i], x[i] * 10.0f) << i;
    EXPECT_EQ(got_d[i], x[i] * 6.0f) << i;
  }
  for (float v : download(e, Format::F32, 4)) EXPECT_EQ(v, 1.0f);
  // A new recording counts from zero.
  seq.begin();
  EXPECT_EQ(seq.counts().dispatches, 0u);
  EXPECT_EQ(seq.counts().barriers, 0u);
  seq.end();
  EXPECT_EQ(seq.counts().barriers, 1u);
}

TEST_F(Engine, SubmitDoesNotWaitAndWaitIsCounted) {
  Buffer buf(ctx(), 4096);
  Sequence seq(ctx());
  seq.begin();
  ops::scale(seq, Format::F32, buf, buf, 1024, 1.0f);
  seq.end();
  uint64_t before = ctx().host_waits();
  seq.submit();
  EXPECT_EQ(ctx().host_waits(), before);
  seq.wait();
  EXPECT_EQ(ctx().host_waits(), before + 1);
  EXPECT_TRUE(seq.done());
}

TEST_F(Engine, TimestampsGiveOneTimePerDispatch) {
  if (!ctx().info().timestamps) GTEST_SKIP() << "device has no compute timestamps";
  Buffer buf(ctx(), 4 * 100000);
  Sequence seq(ctx(), /*timestamps=*/true);
  seq.begin();
  ops::scale(seq, Format::F32, buf, buf, 100000, 1.0f);
  ops::scale(seq, Format::F32, buf, buf, 100000, 1.0f);
  seq.end();
  seq.run();
  auto t = seq.timings();
  ASSERT_EQ(t.size(), 2u);
  for (auto& d : t) {
    EXPECT_EQ(d.label, "scale");
    EXPECT_GT(d.ms, 0.0);
    EXPECT_LT(d.ms, 10000.0);
  }
}

TEST_F(Engine, WrongBindingsAndUnknownShadersAreErrors) {
  EXPECT_THROW(ctx().kernel({"no_such_shader", 1, 0, {}}), Error);
  Kernel& k = ctx().kernel({"sum", 2, 12, {}});
  Buffer b(ctx(), 16);
  Sequence seq(ctx());
  seq.begin();
  uint32_t push[3] = {1, 0, 0};
  EXPECT_THROW(seq.dispatch(k, {b}, push, 12, {1}), Error);         // one buffer short
  EXPECT_THROW(seq.dispatch(k, {b, b}, push, 8, {1}), Error);       // push size wrong
  Buffer small(ctx(), 8);
  EXPECT_THROW(ops::scale(seq, Format::F32, small, small, 100, 1.0f), Error);  // too small
  seq.end();
}

TEST_F(Engine, Fp16StorageFallbackGivesTheSameBits) {
  // The path a device without shaderFloat16 takes, forced on this one.
  ContextOptions opt;
  opt.validation = ctx().validation();  // the test main's: off under VKAMP_TEST_VALIDATION=0
  opt.fp16_storage_only = true;
  opt.pipeline_cache = "none";
  Context fallback(opt);
  EXPECT_EQ(fallback.variant(Format::F16), "fp16s");
  std::vector<float> x = random_values(333, -100, 100, Format::F16);
  auto run = [&](Context& c) {
    Buffer in = upload(c, Format::F16, x);
    Buffer out = poisoned(c, Format::F16, x.size());
    Sequence seq(c);
    seq.begin();
    ops::scale(seq, Format::F16, in, out, uint32_t(x.size()), 1000.0f);  // some overflow to inf
    seq.end();
    seq.run();
    return download(out, Format::F16, x.size());
  };
  auto a = run(ctx()), b = run(fallback);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(a[i], b[i]) << i;
    EXPECT_EQ(a[i], round_to(Format::F16, x[i] * 1000.0f)) << i;
  }
}

TEST_F(Engine, ContextTeardownLeaksNothingAndSavesThePipelineCache) {
  auto path = std::filesystem::temp_directory_path() /
              ("vkamp-cache-test-" + std::to_string(vkamp::platform::process_id()) + ".bin");
  std::filesystem::remove(path);
  uint64_t before = validation_message_count();
  {
    ContextOptions opt;
    opt.validation = ctx().validation();  // the test main's: off under VKAMP_TEST_VALIDATION=0
    opt.pipeline_cache = path.string();
    Context c(opt);
    Buffer b(c, 1024);
    Sequence seq(c, true);
    seq.begin();
    ops::scale(seq, Format::F16, b, b, 512, 1.0f);
    seq.end();
    seq.run();
  }
  // Object tracking reports leaks when the device is destroyed.
  EXPECT_EQ(validation_message_count(), before);
  EXPECT_TRUE(std::filesystem::exists(path));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace vkamp::test
