// The cooperative-matrix (tensor-core) shapes a device offers, through
// VK_KHR_cooperative_matrix and VK_NV_cooperative_matrix: what vkamp-info
// lists, and what a tensor-core GEMM must choose from.
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkamp {

struct CooperativeMatrixShape {
  const char* api = "";  // "KHR" or "NV"
  uint32_t m = 0, n = 0, k = 0;
  // Component types by name ("fp16", "fp32", "bf16", "s8", ...): A x B + C -> result.
  std::string a, b, c, result;
  std::string scope;  // "subgroup", "workgroup", "device", "queue family"
  bool saturating = false;  // KHR only: saturating integer accumulation

  // "16x16x16 fp16 x fp16 + fp32 -> fp32, subgroup"
  std::string describe() const;
};

// The extension a tensor-core GEMM build speaks: gemm_mma.comp's ".coopmat"
// build (GL_NV_cooperative_matrix, as glslang 12 compiles it) or its ".khr"
// twin (SPV_KHR_cooperative_matrix, written from it by tools/spirv_khr).
enum class CoopmatApi { nv, khr };
const char* coopmat_api_name(CoopmatApi api);  // "NV", "KHR"

// Whether `shapes` hold, through `api`, the one vkamp's tensor-core GEMM is
// written for: 16x16x16, fp16 x fp16 + fp32 -> fp32, subgroup scope.
bool offers_fp16_mma(const std::vector<CooperativeMatrixShape>& shapes, CoopmatApi api);
bool offers_nv_fp16_mma(const std::vector<CooperativeMatrixShape>& shapes);
// The fp16 x fp16 -> fp32 subgroup shapes `api` lists instead, e.g.
// "8x16x16" (Intel), comma-separated; empty when none.
std::string fp16_mma_shapes(const std::vector<CooperativeMatrixShape>& shapes, CoopmatApi api);

// VkPhysicalDeviceCooperativeMatrixFeaturesKHR, which Debian 12's Vulkan
// headers (1.3.239) predate: the registry's layout and sType.
struct KhrCooperativeMatrixFeatures {
  VkStructureType sType = VkStructureType(1000506000);
  void* pNext = nullptr;
  VkBool32 cooperativeMatrix = VK_FALSE;
  VkBool32 cooperativeMatrixRobustBufferAccess = VK_FALSE;
};
constexpr const char* kKhrCooperativeMatrixExtension = "VK_KHR_cooperative_matrix";

// Every shape each extension the device has reports (KHR first); empty
// when it has neither. Needs the instance for the entry points.
std::vector<CooperativeMatrixShape> probe_cooperative_matrix(VkInstance instance, VkPhysicalDevice pd, bool khr,
                                                             bool nv);

}  // namespace vkamp
