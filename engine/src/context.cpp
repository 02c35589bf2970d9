#include "vkamp/context.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "vkamp/config_error.hpp"
#include "vkamp/error.hpp"
#include "vkamp/knobs.hpp"
#include "vkamp/one_shot.hpp"
#include "vkamp/platform.hpp"

namespace vkamp {
namespace {

std::string default_cache_path(const DeviceInfo& info) {
  const std::string dir = platform::user_cache_dir();
  if (dir.empty()) return "";
  char uuid[2 * VK_UUID_SIZE + 1];
  for (unsigned i = 0; i < VK_UUID_SIZE; ++i) std::snprintf(uuid + 2 * i, 3, "%02x", info.pipeline_cache_uuid[i]);
  return dir + "/pipelines-" + uuid + ".bin";
}

}  // namespace

const char* Context::gemm_mma_build() const {
  if (gemm_mma_ != GemmMma::coopmat) return "";
  return coopmat_api_ == CoopmatApi::khr ? ".khr" : ".coopmat";
}

Context::Context(ContextOptions opt)
    : paths_(opt.paths.or_else(kernel_paths_from_env())),
      plan_only_(opt.plan_only),
      instance_(opt.validation.value_or(validation_requested_by_env())) {
  auto devices = probe_devices(instance_);
  std::string selector = opt.device.empty() ? env_text("VKAMP_DEVICE").value_or("") : opt.device;
  if (selector.empty() && opt.local_rank >= 0) {
    std::vector<size_t> usable;
    for (size_t i = 0; i < devices.size(); ++i)
      if (devices[i].path() != PrecisionPath::Unsupported) usable.push_back(i);
    if (!usable.empty()) selector = std::to_string(usable[size_t(opt.local_rank) % usable.size()]);
  }
  info_ = devices[select_device(devices, selector)];
  path_ = info_.path();
  if (path_ == PrecisionPath::Unsupported)
    throw Error("device \"" + info_.name + "\" cannot run vkamp: " + info_.unsupported_reason);
  if (opt.fp16_storage_only || env_switch("VKAMP_FP16_STORAGE_ONLY", false))
    path_ = PrecisionPath::Fp16Storage;

  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = info_.compute_queue_family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;

  VkPhysicalDevice16BitStorageFeatures storage16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  storage16.storageBuffer16BitAccess = VK_TRUE;
  VkPhysicalDeviceShaderFloat16Int8Features float16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  float16.shaderFloat16 = VK_TRUE;
  VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  feats.pNext = &storage16;
  std::vector<const char*> extensions;
  if (path_ == PrecisionPath::Fp16Arithmetic) {
    storage16.pNext = &float16;
    if (info_.api_version < VK_API_VERSION_1_2)
      extensions.push_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  }

  // Float controls are properties, not features: a Vulkan 1.2 device has
  // them in core (the instance asks for 1.2); a 1.1 device needs the
  // extension enabled before a shader may declare the execution mode.
  if (opt.inf_nan_preserve.value_or(env_switch("VKAMP_INF_NAN_PRESERVE", true)))
    inf_nan_preserve_ = {info_.float_controls && info_.inf_nan_preserve[0],
                         info_.float_controls && info_.inf_nan_preserve[1]};
  if (inf_nan_preserve_.any() && info_.float_controls_ext)
    extensions.push_back(VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME);

  // The tensor-core GEMM's shaders hold fp16 values in shared memory, so
  // both of its builds need the fp16-arithmetic path; the cooperative-matrix
  // builds also need their extension and the Vulkan memory model, which
  // glslang declares for GL_NV_cooperative_matrix. NV where the device runs
  // that build, else KHR (the same kernel, written from it by
  // tools/spirv_khr); a coopmat_api forces one. Asked for nothing, coopmat where
  // the device has it: the GEMM tuner then runs the shader GEMM for every
  // class but those a tuning on this device measured faster on tensor cores.
  const std::optional<GemmMma> asked = paths_.gemm_mma;
  const std::optional<CoopmatApi> forced = paths_.coopmat_api;
  coopmat_api_ = forced.value_or(info_.tensor_core_api());
  const std::string gap = forced ? info_.tensor_core_gap(coopmat_api_) : info_.tensor_core_gap();
  gemm_mma_auto_ = !asked && gap.empty();
  gemm_mma_ = asked ? *asked : gemm_mma_auto_ ? GemmMma::coopmat : GemmMma::off;
  if (gemm_mma_ == GemmMma::coopmat && !gap.empty())
    throw Error(std::string(coopmat_api_ == CoopmatApi::khr && forced ? "VKAMP_COOPMAT=khr" : "VKAMP_COOPMAT=1") +
                ": device \"" + info_.name + "\" cannot run the tensor-core GEMM: " + gap +
                " (VKAMP_COOPMAT=emulate runs its emulation)");
  if (path_ != PrecisionPath::Fp16Arithmetic) gemm_mma_ = GemmMma::off, gemm_mma_auto_ = false;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coopmat{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  coopmat.cooperativeMatrix = VK_TRUE;
  KhrCooperativeMatrixFeatures coopmat_khr;
  coopmat_khr.cooperativeMatrix = VK_TRUE;
  VkPhysicalDeviceVulkanMemoryModelFeatures memory_model{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
  memory_model.vulkanMemoryModel = VK_TRUE;
  if (gemm_mma_ == GemmMma::coopmat) {
    const bool khr = coopmat_api_ == CoopmatApi::khr;
    memory_model.pNext = feats.pNext;
    coopmat.pNext = coopmat_khr.pNext = &memory_model;
    feats.pNext = khr ? static_cast<void*>(&coopmat_khr) : static_cast<void*>(&coopmat);
    extensions.push_back(khr ? kKhrCooperativeMatrixExtension : VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }

  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &feats;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = uint32_t(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  VKAMP_VK(vkCreateDevice(info_.handle, &dci, nullptr, &device_));
  vkGetDeviceQueue(device_, info_.compute_queue_family, 0, &queue_);
  vkGetPhysicalDeviceMemoryProperties(info_.handle, &memory_);

  try {
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = info_.compute_queue_family;
    VKAMP_VK(vkCreateCommandPool(device_, &pci, nullptr, &pool_));

    cache_path_ = opt.pipeline_cache.empty() ? env_text("VKAMP_PIPELINE_CACHE").value_or(default_cache_path(info_))
                                             : opt.pipeline_cache;
    if (cache_path_ == "none") cache_path_.clear();
    std::vector<char> blob;
    if (!cache_path_.empty()) {
      std::ifstream in(vkamp::platform::path_from_utf8(cache_path_), std::ios::binary);
      blob.assign(std::istreambuf_iterator<char>(in), {});
    }
    // Warm: past the 32-byte header (VkPipelineCacheHeaderVersionOne) there
    // is data, and the header's cache UUID is this driver's.
    cache_warm_ = blob.size() > 32 && std::memcmp(blob.data() + 16, info_.pipeline_cache_uuid, VK_UUID_SIZE) == 0;
    // The driver checks the blob's header (vendor, device, cache UUID) and
    // ignores a cache from another device or driver version.
    VkPipelineCacheCreateInfo cci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    cci.initialDataSize = blob.size();
    cci.pInitialData = blob.empty() ? nullptr : blob.data();
    if (vkCreatePipelineCache(device_, &cci, nullptr, &cache_) != VK_SUCCESS) {
      cci.initialDataSize = 0;
      cci.pInitialData = nullptr;
      VKAMP_VK(vkCreatePipelineCache(device_, &cci, nullptr, &cache_));
    }
  } catch (...) {
    if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
    vkDestroyDevice(device_, nullptr);
    throw;
  }
}

Context::~Context() {
  extensions_.clear();
  if (device_) vkDeviceWaitIdle(device_);
  kernels_.clear();
  save_pipeline_cache();
  vkDestroyPipelineCache(device_, cache_, nullptr);
  vkDestroyCommandPool(device_, pool_, nullptr);
  vkDestroyDevice(device_, nullptr);
}

void Context::save_pipeline_cache() {
  if (cache_path_.empty() || !cache_) return;
  size_t size = 0;
  if (vkGetPipelineCacheData(device_, cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
  // What another context or process saved since this one opened is merged
  // in first, so the last to save keeps every kernel, not only its own.
  {
    std::ifstream in(vkamp::platform::path_from_utf8(cache_path_), std::ios::binary);
    const std::vector<char> saved((std::istreambuf_iterator<char>(in)), {});
    VkPipelineCacheCreateInfo cci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    cci.initialDataSize = saved.size();
    cci.pInitialData = saved.data();
    VkPipelineCache other = VK_NULL_HANDLE;
    if (saved.size() > 32 && vkCreatePipelineCache(device_, &cci, nullptr, &other) == VK_SUCCESS) {
      vkMergePipelineCaches(device_, cache_, 1, &other);
      vkDestroyPipelineCache(device_, other, nullptr);
    }
    if (vkGetPipelineCacheData(device_, cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
  }
  std::vector<char> blob(size);
  if (vkGetPipelineCacheData(device_, cache_, &size, blob.data()) != VK_SUCCESS) return;
  // Written to a temporary name and renamed, so parallel test processes never
  // read a half-written cache. A cache that cannot be saved costs only time.
  std::error_code ec;
  std::filesystem::create_directories(vkamp::platform::path_from_utf8(cache_path_).parent_path(), ec);
  std::string tmp = cache_path_ + ".tmp" + std::to_string(reinterpret_cast<uintptr_t>(this));
  {
    std::ofstream out(vkamp::platform::path_from_utf8(tmp), std::ios::binary);
    if (!out.write(blob.data(), std::streamsize(size))) return;
  }
  std::filesystem::rename(vkamp::platform::path_from_utf8(tmp), vkamp::platform::path_from_utf8(cache_path_), ec);
  if (ec) std::filesystem::remove(vkamp::platform::path_from_utf8(tmp), ec);
}

std::string Context::variant(Format f) const {
  if (f == Format::F16 && path_ != PrecisionPath::Fp16Arithmetic) return "fp16s";
  return format_name(f);
}

Kernel& Context::kernel(const KernelSpec& spec) {
  std::string key = spec.key();
  auto it = kernels_.find(key);
  if (it != kernels_.end()) return *it->second;
  auto k = std::make_unique<Kernel>(*this, spec);
  Kernel& ref = *k;
  kernels_.emplace(std::move(key), std::move(k));
  return ref;
}

uint32_t Context::memory_type(uint32_t bits, VkMemoryPropertyFlags required,
                              VkMemoryPropertyFlags preferred) const {
  for (int pass = 0; pass < 2; ++pass) {
    VkMemoryPropertyFlags want = required | (pass == 0 ? preferred : 0);
    for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i)
      if ((bits & (1u << i)) && (memory_.memoryTypes[i].propertyFlags & want) == want) return i;
  }
  throw Error("no Vulkan memory type has the flags vkamp needs");
}

void Context::count_device_bytes(int64_t delta) {
  const uint64_t now = device_bytes_.fetch_add(uint64_t(delta)) + uint64_t(delta);
  uint64_t peak = peak_device_bytes_.load();
  while (now > peak && !peak_device_bytes_.compare_exchange_weak(peak, now)) {
  }
}

void Context::run_now(void (*record)(VkCommandBuffer, void*), void* user) {
  count_host_wait();
  run_one_shot(device_, queue_, pool_, [&](VkCommandBuffer cb) { record(cb, user); });
}

}  // namespace vkamp
