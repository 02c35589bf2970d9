// The SignedZeroInfNanPreserve patch (spirv_float_controls.hpp) on every
// embedded shader: where it goes, what it leaves alone, and that it is
// idempotent. The validation layer (on in every test) checks each patched
// module that a pipeline is built from; Engine.PipelinesCarryTheMode below
// builds one on this device.
#include <algorithm>
#include <vector>

#include "support/gpu_test.hpp"
#include "support/spirv_words.hpp"
#include "vkamp/error.hpp"
#include "vkamp/shader_registry.hpp"
#include "vkamp/spirv_float_controls.hpp"

namespace vkamp::test {
namespace {

constexpr uint32_t kOpCapability = 17, kOpExtension = 10, kOpExecutionMode = 16;

std::vector<uint32_t> words_of(const ShaderCode& s) { return {s.words, s.words + s.word_count}; }

bool declares_float16(const std::vector<uint32_t>& m) { return count_instructions(m, kOpCapability, 1, 9) > 0; }

TEST(SpirvFloatControls, AddsTheModeToEveryShaderOnce) {
  for (const ShaderCode* s : all_shaders()) {
    SCOPED_TRACE(s->name);
    const std::vector<uint32_t> m = words_of(*s);
    ASSERT_TRUE(inf_nan_preserve_widths(m).empty()) << "the build no longer sets the mode itself";
    const std::vector<uint32_t> p = with_inf_nan_preserve(m, {true, true});
    std::vector<uint32_t> want{32};
    if (declares_float16(m)) want.insert(want.begin(), 16);
    std::vector<uint32_t> got = inf_nan_preserve_widths(p);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want);
    EXPECT_EQ(count_instructions(p, kOpCapability, 1, 4466), 1u);
    // SPIR-V 1.3 (vulkan1.1) needs the extension; its name starts "SPV_".
    EXPECT_EQ(count_instructions(p, kOpExtension, 1, 0x5F565053u), count_instructions(m, kOpExtension, 1, 0x5F565053u) + 1);
    EXPECT_EQ(p[3], m[3]) << "the id bound is unchanged (no new ids)";
    // Everything else is kept, in order: the new words are 2 + 7 + 4 per width.
    EXPECT_EQ(p.size(), m.size() + 2 + 7 + 4 * want.size());
    EXPECT_EQ(with_inf_nan_preserve(p, {true, true}), p) << "patching twice adds nothing";
  }
}

TEST(SpirvFloatControls, OnlyTheWidthsAsked) {
  const ShaderCode* s = find_shader("activation.fp16");
  ASSERT_NE(s, nullptr);
  const std::vector<uint32_t> m = words_of(*s);
  EXPECT_EQ(inf_nan_preserve_widths(with_inf_nan_preserve(m, {false, true})), std::vector<uint32_t>{32});
  EXPECT_EQ(inf_nan_preserve_widths(with_inf_nan_preserve(m, {true, false})), std::vector<uint32_t>{16});
  EXPECT_EQ(with_inf_nan_preserve(m, {false, false}), m);
  // fp16 is not added to a module without Float16 arithmetic.
  const ShaderCode* f32 = find_shader("activation.fp32");
  ASSERT_NE(f32, nullptr);
  EXPECT_EQ(with_inf_nan_preserve(words_of(*f32), {true, false}), words_of(*f32));
}

TEST(SpirvFloatControls, RejectsWhatIsNotAModule) {
  std::vector<uint32_t> junk{1, 2, 3, 4, 5, 6};
  EXPECT_THROW(with_inf_nan_preserve(junk, {true, true}), Error);
  std::vector<uint32_t> m = words_of(*find_shader("sum"));
  m[5] = 0xFFFF0000u | (m[5] & 0xFFFF);  // an instruction longer than the module
  EXPECT_THROW(with_inf_nan_preserve(m, {true, true}), Error);
}

class PreserveMode : public GpuTest {};

// What this device runs with: every width it offers, unless turned off.
TEST_F(PreserveMode, FollowsTheDeviceAndTheOverride) {
  const DeviceInfo& d = ctx().info();
  const char* off = std::getenv("VKAMP_INF_NAN_PRESERVE");
  const bool wanted = !(off && std::string(off) == "0");
  EXPECT_EQ(ctx().inf_nan_preserve().fp32, wanted && d.float_controls && d.inf_nan_preserve[1]);
  EXPECT_EQ(ctx().inf_nan_preserve().fp16, wanted && d.float_controls && d.inf_nan_preserve[0]);
  std::printf("SignedZeroInfNanPreserve: fp32 %s, fp16 %s\n", ctx().inf_nan_preserve().fp32 ? "on" : "off",
              ctx().inf_nan_preserve().fp16 ? "on" : "off");
}

}  // namespace
}  // namespace vkamp::test
