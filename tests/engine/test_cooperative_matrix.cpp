// Which tensor-core build a device takes (DeviceInfo::tensor_core_api and
// tensor_core_gap), from the extensions and shapes it lists: host only, on
// made-up devices shaped like NVIDIA's, AMD's and Intel's.
#include <gtest/gtest.h>

#include "vkamp/device_info.hpp"

namespace vkamp {
namespace {

CooperativeMatrixShape shape(const char* api, uint32_t m, uint32_t n, uint32_t k, const char* ab = "fp16",
                             const char* cd = "fp32") {
  return {api, m, n, k, ab, ab, cd, cd, "subgroup", false};
}

// Everything the kernel needs but the cooperative-matrix extensions.
DeviceInfo device(uint32_t subgroup) {
  DeviceInfo d;
  d.api_version = VK_API_VERSION_1_3;
  d.shader_float16 = true;
  d.vulkan_memory_model = true;
  d.subgroup_ops = VK_SUBGROUP_FEATURE_BASIC_BIT;
  d.subgroup_size = subgroup;
  return d;
}

TEST(CooperativeMatrix, BothExtensionsTakeNvAndEitherRuns) {
  DeviceInfo d = device(32);  // an H200: both extensions, both 16x16x16
  d.cooperative_matrix = d.cooperative_matrix_nv = true;
  d.cooperative_matrix_shapes = {shape("KHR", 16, 16, 16), shape("KHR", 16, 8, 16), shape("NV", 16, 16, 16)};
  EXPECT_EQ(d.tensor_core_api(), CoopmatApi::nv);
  EXPECT_EQ(d.tensor_core_gap(CoopmatApi::nv), "");
  EXPECT_EQ(d.tensor_core_gap(CoopmatApi::khr), "") << "VKAMP_COOPMAT=khr runs here";
  EXPECT_EQ(d.tensor_core_gap(), "");
}

TEST(CooperativeMatrix, KhrOnlyTakesKhr) {
  DeviceInfo d = device(64);  // AMD RDNA3 on AMDVLK: KHR only, subgroups of 64
  d.cooperative_matrix = true;
  d.cooperative_matrix_shapes = {shape("KHR", 16, 16, 16), shape("KHR", 16, 16, 16, "fp16", "fp16")};
  EXPECT_EQ(d.tensor_core_api(), CoopmatApi::khr);
  EXPECT_EQ(d.tensor_core_gap(CoopmatApi::nv), "no VK_NV_cooperative_matrix");
  EXPECT_EQ(d.tensor_core_gap(CoopmatApi::khr), "");
  EXPECT_EQ(d.tensor_core_gap(), "");
}

TEST(CooperativeMatrix, AMissingShapeIsNamedWithTheShapesListed) {
  DeviceInfo d = device(16);  // Intel Xe2: KHR 8x16x16 with subgroups of 16
  d.cooperative_matrix = true;
  d.cooperative_matrix_shapes = {shape("KHR", 8, 16, 16), shape("KHR", 8, 16, 16, "s8", "s32")};
  EXPECT_EQ(d.tensor_core_gap(CoopmatApi::khr), "no 16x16x16 fp16 x fp16 -> fp32 subgroup shape (lists 8x16x16)");
  EXPECT_EQ(d.tensor_core_gap(),
            "NV: no VK_NV_cooperative_matrix; KHR: no 16x16x16 fp16 x fp16 -> fp32 subgroup shape (lists 8x16x16)");
  // An NV-only shape does not count for KHR, nor the other way round.
  d.cooperative_matrix_shapes = {shape("NV", 16, 16, 16)};
  EXPECT_EQ(d.tensor_core_gap(CoopmatApi::khr), "no 16x16x16 fp16 x fp16 -> fp32 subgroup shape");
}

TEST(CooperativeMatrix, TheRestOfTheKernelsNeedsStillCount) {
  DeviceInfo d = device(48);
  d.cooperative_matrix = true;
  d.cooperative_matrix_shapes = {shape("KHR", 16, 16, 16)};
  EXPECT_NE(d.tensor_core_gap(CoopmatApi::khr).find("subgroups of 48"), std::string::npos);
  d.subgroup_size = 32;
  d.vulkan_memory_model = false;
  EXPECT_EQ(d.tensor_core_gap(CoopmatApi::khr), "no vulkanMemoryModel");
}

}  // namespace
}  // namespace vkamp
