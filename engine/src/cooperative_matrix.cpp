#include "vkamp/cooperative_matrix.hpp"

namespace vkamp {
namespace {

// VK_KHR_cooperative_matrix came with Vulkan headers 1.3.255; Debian 12's
// are 1.3.239. The struct and values below are the registry's (vk.xml),
// laid out as the spec's VkCooperativeMatrixPropertiesKHR.
constexpr VkStructureType kKhrPropertiesType = VkStructureType(1000506001);
struct KhrProperties {
  VkStructureType sType;
  void* pNext;
  uint32_t MSize, NSize, KSize;
  uint32_t AType, BType, CType, ResultType;  // VkComponentTypeKHR
  VkBool32 saturatingAccumulation;
  uint32_t scope;  // VkScopeKHR
};
using KhrQuery = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*, KhrProperties*);

// VkComponentTypeKHR (the NV values are the same numbers).
std::string component(uint32_t t) {
  switch (t) {
    case 0: return "fp16";
    case 1: return "fp32";
    case 2: return "fp64";
    case 3: return "s8";
    case 4: return "s16";
    case 5: return "s32";
    case 6: return "s64";
    case 7: return "u8";
    case 8: return "u16";
    case 9: return "u32";
    case 10: return "u64";
    case 1000141000: return "bf16";
    case 1000491000: return "s8x4";
    case 1000491001: return "u8x4";
    case 1000491002: return "e4m3";
    case 1000491003: return "e5m2";
  }
  return "type " + std::to_string(t);
}

// VkScopeKHR / VkScopeNV.
std::string scope(uint32_t s) {
  switch (s) {
    case 1: return "device";
    case 2: return "workgroup";
    case 3: return "subgroup";
    case 5: return "queue family";
  }
  return "scope " + std::to_string(s);
}

template <class Props, class Query>
std::vector<Props> query_all(Query query, VkPhysicalDevice pd, VkStructureType type) {
  uint32_t n = 0;
  if (query(pd, &n, nullptr) != VK_SUCCESS || n == 0) return {};
  std::vector<Props> props(n);
  for (Props& p : props) {
    p = {};
    p.sType = type;
  }
  if (query(pd, &n, props.data()) < VK_SUCCESS) return {};
  props.resize(n);
  return props;
}

}  // namespace

std::string CooperativeMatrixShape::describe() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " + a + " x " + b + " + " + c +
         " -> " + result + ", " + scope + (saturating ? ", saturating" : "");
}

const char* coopmat_api_name(CoopmatApi api) { return api == CoopmatApi::nv ? "NV" : "KHR"; }

namespace {
bool fp16_into_fp32(const CooperativeMatrixShape& s, CoopmatApi api) {
  return std::string(s.api) == coopmat_api_name(api) && s.a == "fp16" && s.b == "fp16" && s.c == "fp32" &&
         s.result == "fp32" && s.scope == "subgroup";
}
}  // namespace

bool offers_fp16_mma(const std::vector<CooperativeMatrixShape>& shapes, CoopmatApi api) {
  for (const auto& s : shapes)
    if (fp16_into_fp32(s, api) && s.m == 16 && s.n == 16 && s.k == 16) return true;
  return false;
}

bool offers_nv_fp16_mma(const std::vector<CooperativeMatrixShape>& shapes) {
  return offers_fp16_mma(shapes, CoopmatApi::nv);
}

std::string fp16_mma_shapes(const std::vector<CooperativeMatrixShape>& shapes, CoopmatApi api) {
  std::string list;
  for (const auto& s : shapes)
    if (fp16_into_fp32(s, api))
      list += (list.empty() ? "" : ", ") + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
  return list;
}

std::vector<CooperativeMatrixShape> probe_cooperative_matrix(VkInstance instance, VkPhysicalDevice pd, bool khr,
                                                             bool nv) {
  std::vector<CooperativeMatrixShape> out;
  if (khr) {
    auto query = reinterpret_cast<KhrQuery>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
    if (query)
      for (const KhrProperties& p : query_all<KhrProperties>(query, pd, kKhrPropertiesType))
        out.push_back({"KHR", p.MSize, p.NSize, p.KSize, component(p.AType), component(p.BType), component(p.CType),
                       component(p.ResultType), scope(p.scope), p.saturatingAccumulation == VK_TRUE});
  }
  if (nv) {
    auto query = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
    if (query)
      for (const VkCooperativeMatrixPropertiesNV& p : query_all<VkCooperativeMatrixPropertiesNV>(
               query, pd, VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV))
        out.push_back({"NV", p.MSize, p.NSize, p.KSize, component(p.AType), component(p.BType), component(p.CType),
                       component(p.DType), scope(p.scope), false});
  }
  return out;
}

}  // namespace vkamp
