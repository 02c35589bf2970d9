#include "vkamp/device_info.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "vkamp/error.hpp"
#include "vkamp/instance.hpp"
#include "device_memory.hpp"

namespace vkamp {
namespace {

bool has_device_extension(VkPhysicalDevice pd, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
  for (auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = char(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

// The first queue family with compute, and its timestamp bits.
void probe_queues(VkPhysicalDevice pd, DeviceInfo& d) {
  uint32_t qn = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, nullptr);
  std::vector<VkQueueFamilyProperties> qf(qn);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, qf.data());
  for (uint32_t i = 0; i < qn; ++i)
    if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      d.compute_queue_family = i;
      d.timestamp_valid_bits = qf[i].timestampValidBits;
      break;
    }

}

// Driver, subgroup and float-controls properties (Vulkan 1.1 and later).
void probe_properties(VkPhysicalDevice pd, const VkPhysicalDeviceProperties& props, DeviceInfo& d) {
  bool v12 = props.apiVersion >= VK_API_VERSION_1_2;
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceFloatControlsProperties fc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
  VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props2.pNext = &subgroup;
  bool has_driver_props = v12 || has_device_extension(pd, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
  if (has_driver_props) subgroup.pNext = &driver;
  d.float_controls_ext = !v12 && has_device_extension(pd, VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME);
  d.float_controls = v12 || d.float_controls_ext;
  if (d.float_controls) {
    void** tail = has_driver_props ? &driver.pNext : &subgroup.pNext;
    *tail = &fc;
  }
  vkGetPhysicalDeviceProperties2(pd, &props2);
  if (d.float_controls) {
    bool nan[3] = {bool(fc.shaderSignedZeroInfNanPreserveFloat16), bool(fc.shaderSignedZeroInfNanPreserveFloat32),
                   bool(fc.shaderSignedZeroInfNanPreserveFloat64)};
    bool keep[3] = {bool(fc.shaderDenormPreserveFloat16), bool(fc.shaderDenormPreserveFloat32),
                    bool(fc.shaderDenormPreserveFloat64)};
    bool ftz[3] = {bool(fc.shaderDenormFlushToZeroFloat16), bool(fc.shaderDenormFlushToZeroFloat32),
                   bool(fc.shaderDenormFlushToZeroFloat64)};
    for (int w = 0; w < 3; ++w) {
      d.inf_nan_preserve[w] = nan[w];
      d.denorm_preserve[w] = keep[w];
      d.denorm_flush_to_zero[w] = ftz[w];
    }
  }
  d.subgroup_size = subgroup.subgroupSize;
  d.subgroup_ops = subgroup.supportedOperations;
  d.driver = has_driver_props ? std::string(driver.driverName) + " (" + driver.driverInfo + ")"
                              : std::string("driver ") + std::to_string(props.driverVersion);

}

// 16-bit storage and shaderFloat16.
void probe_features(VkPhysicalDevice pd, const VkPhysicalDeviceProperties& props, DeviceInfo& d) {
  bool v12 = props.apiVersion >= VK_API_VERSION_1_2;
  VkPhysicalDevice16BitStorageFeatures storage16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceShaderFloat16Int8Features float16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDeviceVulkanMemoryModelFeatures memory_model{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
  VkPhysicalDeviceFeatures2 feats2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  feats2.pNext = &storage16;
  void** tail = &storage16.pNext;
  if (v12 || has_device_extension(pd, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME)) {
    *tail = &float16;
    tail = &float16.pNext;
  }
  if (v12) *tail = &memory_model;  // core in 1.2; the tensor-core GEMM asks no more of a 1.1 device
  vkGetPhysicalDeviceFeatures2(pd, &feats2);
  d.storage_buffer_16bit = storage16.storageBuffer16BitAccess;
  d.shader_float16 = float16.shaderFloat16;
  d.vulkan_memory_model = memory_model.vulkanMemoryModel;
}

DeviceInfo probe(VkInstance instance, VkPhysicalDevice pd, uint32_t index) {
  DeviceInfo d;
  d.index = index;
  d.handle = pd;

  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(pd, &props);
  d.name = props.deviceName;
  d.type = props.deviceType;
  d.api_version = props.apiVersion;
  d.vendor_id = props.vendorID;
  d.device_id = props.deviceID;
  std::memcpy(d.pipeline_cache_uuid, props.pipelineCacheUUID, VK_UUID_SIZE);
  d.driver_version = props.driverVersion;
  d.max_shared_memory = props.limits.maxComputeSharedMemorySize;
  d.max_workgroup_invocations = props.limits.maxComputeWorkGroupInvocations;
  d.texel_offset_alignment = props.limits.minTexelBufferOffsetAlignment;
  d.max_texel_elements = props.limits.maxTexelBufferElements;
  d.max_storage_range = props.limits.maxStorageBufferRange;
  d.storage_offset_alignment = props.limits.minStorageBufferOffsetAlignment;
  d.timestamp_period_ns = props.limits.timestampPeriod;

  d.cooperative_matrix = has_device_extension(pd, "VK_KHR_cooperative_matrix");
  d.cooperative_matrix_nv = has_device_extension(pd, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  d.cooperative_matrix_shapes = probe_cooperative_matrix(instance, pd, d.cooperative_matrix, d.cooperative_matrix_nv);
  d.bfloat16 = has_device_extension(pd, "VK_KHR_shader_bfloat16");

  probe_queues(pd, d);

  probe_memory(pd, props.apiVersion, has_device_extension(pd, "VK_EXT_memory_budget"), d);

  if (props.apiVersion < VK_API_VERSION_1_1) {
    d.unsupported_reason = "Vulkan " + api_version_string(props.apiVersion) +
                           " device; vkamp needs Vulkan 1.1 for 16-bit storage";
    return d;
  }

  probe_properties(pd, props, d);
  probe_features(pd, props, d);
  d.timestamps = d.timestamp_valid_bits > 0;  // of the compute queue we use

  if (d.compute_queue_family == UINT32_MAX) d.unsupported_reason = "no compute queue";
  else if (!d.storage_buffer_16bit) d.unsupported_reason = "no storageBuffer16BitAccess";
  return d;
}

}  // namespace

uint64_t DeviceInfo::memory_budget_bytes() const {
  uint64_t best = 0, size = 0;
  for (const MemoryHeap& h : heaps)
    if (h.device_local && h.size > size) size = h.size, best = h.budget;
  return best;
}

std::string DeviceInfo::tensor_core_gap(CoopmatApi api) const {
  const bool nv = api == CoopmatApi::nv;
  if (!(nv ? cooperative_matrix_nv : cooperative_matrix))
    return nv ? "no VK_NV_cooperative_matrix" : "no VK_KHR_cooperative_matrix";
  if (api_version < VK_API_VERSION_1_2) return "a Vulkan 1.1 device (needs 1.2's memory model)";
  if (!offers_fp16_mma(cooperative_matrix_shapes, api)) {
    // Say what the device lists instead (Intel's 8x16x16, say): the kernel is
    // written for 16x16x16 fragments.
    const std::string other = fp16_mma_shapes(cooperative_matrix_shapes, api);
    return std::string("no 16x16x16 fp16 x fp16 -> fp32 subgroup shape") +
           (other.empty() ? "" : " (lists " + other + ")");
  }
  if (!shader_float16) return "no shaderFloat16";
  if (!vulkan_memory_model) return "no vulkanMemoryModel";
  if (!(subgroup_ops & VK_SUBGROUP_FEATURE_BASIC_BIT) || subgroup_size == 0 || 256 % subgroup_size != 0)
    return "subgroups of " + std::to_string(subgroup_size) + " (needs basic operations, a size dividing 256)";
  return "";
}

CoopmatApi DeviceInfo::tensor_core_api() const {
  return tensor_core_gap(CoopmatApi::nv).empty() ? CoopmatApi::nv : CoopmatApi::khr;
}

std::string DeviceInfo::tensor_core_gap() const {
  const std::string nv = tensor_core_gap(CoopmatApi::nv), khr = tensor_core_gap(CoopmatApi::khr);
  if (nv.empty() || khr.empty()) return "";
  return "NV: " + nv + "; KHR: " + khr;
}

PrecisionPath DeviceInfo::path() const {
  if (!unsupported_reason.empty()) return PrecisionPath::Unsupported;
  return shader_float16 ? PrecisionPath::Fp16Arithmetic : PrecisionPath::Fp16Storage;
}

const char* precision_path_name(PrecisionPath p) {
  switch (p) {
    case PrecisionPath::Fp16Arithmetic: return "fp16 arithmetic";
    case PrecisionPath::Fp16Storage: return "fp16 storage, fp32 math";
    case PrecisionPath::Unsupported: return "unsupported";
  }
  return "?";
}

const char* device_type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

std::string api_version_string(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

std::string subgroup_ops_string(VkSubgroupFeatureFlags ops) {
  static const std::pair<VkSubgroupFeatureFlagBits, const char*> kNames[] = {
      {VK_SUBGROUP_FEATURE_BASIC_BIT, "basic"},       {VK_SUBGROUP_FEATURE_VOTE_BIT, "vote"},
      {VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, "arith"},  {VK_SUBGROUP_FEATURE_BALLOT_BIT, "ballot"},
      {VK_SUBGROUP_FEATURE_SHUFFLE_BIT, "shuffle"},   {VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT, "shuffle_rel"},
      {VK_SUBGROUP_FEATURE_CLUSTERED_BIT, "clustered"}, {VK_SUBGROUP_FEATURE_QUAD_BIT, "quad"}};
  std::string s;
  for (auto& [bit, name] : kNames)
    if (ops & bit) s += (s.empty() ? "" : ",") + std::string(name);
  return s.empty() ? "none" : s;
}

std::vector<DeviceInfo> probe_devices(const Instance& instance) {
  std::vector<DeviceInfo> out;
  auto pds = instance.physical_devices();
  for (uint32_t i = 0; i < pds.size(); ++i) out.push_back(probe(instance.handle(), pds[i], i));
  return out;
}

size_t select_device(const std::vector<DeviceInfo>& devices, std::string_view selector) {
  if (devices.empty()) throw Error("no Vulkan device found");
  auto list = [&] {
    std::string s;
    for (auto& d : devices) s += "\n  " + std::to_string(d.index) + ": " + d.name;
    return s;
  };
  if (selector.empty()) {
    size_t best = 0;
    for (size_t i = 1; i < devices.size(); ++i) {
      bool usable_i = devices[i].path() != PrecisionPath::Unsupported;
      bool usable_b = devices[best].path() != PrecisionPath::Unsupported;
      if (usable_i != usable_b ? usable_i : type_rank(devices[i].type) < type_rank(devices[best].type))
        best = i;
    }
    return best;
  }
  if (std::all_of(selector.begin(), selector.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    size_t idx = std::stoul(std::string(selector));
    if (idx >= devices.size())
      throw Error("device index " + std::string(selector) + " is out of range; devices:" + list());
    return idx;
  }
  std::string want = lower(selector);
  for (size_t i = 0; i < devices.size(); ++i)
    if (lower(devices[i].name).find(want) != std::string::npos) return i;
  throw Error("no device matches \"" + std::string(selector) + "\"; devices:" + list());
}

}  // namespace vkamp
