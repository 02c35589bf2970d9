// What a physical device can do, and which precision path vkamp takes on it.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>
#include <vulkan/vulkan.h>

#include "vkamp/cooperative_matrix.hpp"

namespace vkamp {

class Instance;

enum class PrecisionPath {
  Fp16Arithmetic,  // shaderFloat16 + 16-bit storage: fp16 math in shaders
  Fp16Storage,     // 16-bit storage only: fp16 in memory, fp32 math
  Unsupported,     // no 16-bit storage: vkamp cannot run mixed precision here
};

const char* precision_path_name(PrecisionPath p);

struct DeviceInfo {
  uint32_t index = 0;
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  std::string name;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t api_version = 0;
  uint32_t vendor_id = 0, device_id = 0;
  std::string driver;  // driver name and info, e.g. "llvmpipe (Mesa 22.3.6)"
  uint32_t driver_version = 0;  // VkPhysicalDeviceProperties::driverVersion (vendor-encoded)
  uint8_t pipeline_cache_uuid[VK_UUID_SIZE] = {};

  bool shader_float16 = false;
  bool storage_buffer_16bit = false;
  bool cooperative_matrix = false;     // VK_KHR_cooperative_matrix present
  bool cooperative_matrix_nv = false;  // VK_NV_cooperative_matrix present
  std::vector<CooperativeMatrixShape> cooperative_matrix_shapes;  // both, KHR first
  bool bfloat16 = false;            // VK_KHR_shader_bfloat16 present
  bool vulkan_memory_model = false;  // the feature (cooperative-matrix shaders need it)
  uint32_t subgroup_size = 0;
  VkSubgroupFeatureFlags subgroup_ops = 0;
  bool timestamps = false;          // on the compute queue
  double timestamp_period_ns = 0;
  uint32_t timestamp_valid_bits = 0;
  bool unified_memory = false;      // device-local memory the host can map
  uint64_t device_local_bytes = 0;
  uint32_t compute_queue_family = UINT32_MAX;
  uint32_t max_shared_memory = 0;
  uint32_t max_workgroup_invocations = 128;  // maxComputeWorkGroupInvocations
  // Uniform texel buffers (gemm.comp's ".texel" operand loads): the
  // alignment of a view's start, and the most elements one view may hold.
  uint64_t texel_offset_alignment = 256;
  uint32_t max_texel_elements = 0;
  // Storage buffers: the most bytes one descriptor may bind (128 MiB on
  // lavapipe and Adreno, the least the spec allows) and the alignment of a
  // bound view's start.
  uint64_t max_storage_range = 128u << 20;
  uint64_t storage_offset_alignment = 256;
  // Memory (device_memory.cpp): the most bytes one allocation may take
  // (maxMemoryAllocationSize: 2 GiB on lavapipe) and one buffer may span
  // (maxBufferSize, Vulkan 1.3 / maintenance4; else no less than an
  // allocation), and every heap with its budget: VK_EXT_memory_budget's
  // where offered, else the heap's size. VKAMP_TEST_MAX_BINDING,
  // VKAMP_TEST_MAX_ALLOCATION and VKAMP_TEST_MEMORY_BUDGET lower these
  // (and max_storage_range) for tests; `capped` names the ones set.
  uint64_t max_allocation = 1ull << 30;
  uint64_t max_buffer = UINT64_MAX;
  struct MemoryHeap {
    uint64_t size = 0, budget = 0;
    bool device_local = false;
  };
  std::vector<MemoryHeap> heaps;
  bool memory_budget = false;  // the budgets are VK_EXT_memory_budget's
  std::string capped;          // "VKAMP_TEST_MAX_BINDING=64K ..." while tests lower the limits
  // The most one block of device memory may be: an allocation bound to one buffer.
  uint64_t max_block() const { return max_allocation < max_buffer ? max_allocation : max_buffer; }
  // What a run may plan to hold: the largest device-local heap's budget.
  uint64_t memory_budget_bytes() const;
  std::string unsupported_reason;   // set when path() is Unsupported

  // VK_KHR_shader_float_controls (core in Vulkan 1.2), per float width
  // 16/32/64: whether the device promises to keep inf/NaN/-0 when a shader
  // asks (SignedZeroInfNanPreserve), and how it may treat denormals.
  bool float_controls = false;      // the properties below were reported
  bool float_controls_ext = false;  // needs the KHR extension enabled (a Vulkan 1.1 device)
  bool inf_nan_preserve[3] = {};    // [0] fp16, [1] fp32, [2] fp64
  bool denorm_preserve[3] = {};
  bool denorm_flush_to_zero[3] = {};

  PrecisionPath path() const;
  // Why the tensor-core GEMM cannot run here through `api`'s build (empty
  // when it can); without `api`, why it runs through neither.
  std::string tensor_core_gap(CoopmatApi api) const;
  std::string tensor_core_gap() const;
  // The build the tensor-core GEMM takes by default: NV where NV can run it
  // (the build glslang compiles; KHR is written from it), else KHR.
  CoopmatApi tensor_core_api() const;
};

const char* device_type_name(VkPhysicalDeviceType t);
std::string api_version_string(uint32_t v);
std::string subgroup_ops_string(VkSubgroupFeatureFlags ops);

// Every physical device, probed. Never throws for a device that lacks features.
std::vector<DeviceInfo> probe_devices(const Instance& instance);

// Picks a device by index ("1") or case-insensitive name substring ("nvidia").
// An empty selector prefers discrete, then integrated, virtual, CPU. Throws a
// vkamp::Error listing the devices when nothing matches.
size_t select_device(const std::vector<DeviceInfo>& devices, std::string_view selector);

}  // namespace vkamp
