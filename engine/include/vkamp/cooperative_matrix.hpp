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

// Whether `shapes` hold the one vkamp's tensor-core GEMM (gemm_mma.comp's
// ".coopmat" build) is written for: NV, 16x16x16, fp16 x fp16 + fp32 -> fp32,
// subgroup scope.
bool offers_nv_fp16_mma(const std::vector<CooperativeMatrixShape>& shapes);

// Every shape each extension the device has reports (KHR first); empty
// when it has neither. Needs the instance for the entry points.
std::vector<CooperativeMatrixShape> probe_cooperative_matrix(VkInstance instance, VkPhysicalDevice pd, bool khr,
                                                             bool nv);

}  // namespace vkamp
