// Context: one selected device, its queue, command pool, pipeline cache and
// compiled kernels (Kompute's Manager). Everything else borrows a Context.
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <typeindex>
#include <utility>
#include <vector>
#include <vulkan/vulkan.h>

#include "vkamp/device_info.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/instance.hpp"
#include "vkamp/kernel.hpp"
#include "vkamp/kernel_paths.hpp"
#include "vkamp/spirv_float_controls.hpp"

namespace vkamp {

// State a layer above keeps per context (ops' GEMM tuner), owned by the
// context so that it lives and dies with the device, before it, without
// the context knowing its type.
class ContextExtension {
 public:
  virtual ~ContextExtension() = default;
};

struct ContextOptions {
  // Index or name substring; empty means $VKAMP_DEVICE, then the best device
  // (or, with local_rank set, the local_rank-th usable device, modulo their count).
  std::string device;
  // A data-parallel rank's index among the ranks on its machine (-1: none),
  // so that the ranks of one machine spread over its GPUs.
  int local_rank = -1;
  // Khronos validation layer; unset means $VKAMP_VALIDATION.
  std::optional<bool> validation;
  // Pipeline cache file; empty means $VKAMP_PIPELINE_CACHE, then
  // platform::user_cache_dir() (XDG, or %LOCALAPPDATA%\vkamp); "none" keeps it in memory.
  std::string pipeline_cache;
  // Take the fp16-storage path even where shaderFloat16 exists (tests the
  // fallback). $VKAMP_FP16_STORAGE_ONLY=1 sets it too.
  bool fp16_storage_only = false;
  // Kernels with the SignedZeroInfNanPreserve mode where the device offers
  // it; unset means $VKAMP_INF_NAN_PRESERVE (on unless 0). Off tests the
  // shaders' exponent-bit decisions as a device without the mode runs them.
  std::optional<bool> inf_nan_preserve;
  // Which kernel each op takes and which fusions the graph makes
  // (kernel_paths.hpp). Fields left unset are read from the environment,
  // then left to the device. gemm_mma coopmat on a device without tensor
  // cores (DeviceInfo::tensor_core_gap), or a coopmat_api it cannot run, is
  // an Error; on the fp16-storage path every GEMM stays off.
  KernelPaths paths;
  // A --dry-run's context: steps are recorded and their memory planned but
  // never run, so a CPU driver's limits on running a kernel (lavapipe's
  // loop count) do not stop a plan of the path a GPU would take.
  bool plan_only = false;
};

class Context {
 public:
  explicit Context(ContextOptions options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& info() const { return info_; }
  PrecisionPath path() const { return path_; }
  // The options' paths, filled in from the environment: what every op and
  // the graph read (a field still unset: the device's default).
  const KernelPaths& paths() const { return paths_; }
  bool plan_only() const { return plan_only_; }
  GemmMma gemm_mma() const { return gemm_mma_; }
  // Which extension the coopmat path speaks (meaningful when gemm_mma() is coopmat).
  CoopmatApi coopmat_api() const { return coopmat_api_; }
  // gemm_mma.comp's build for gemm_mma(): "" (the emulation), ".coopmat" (NV) or ".khr".
  const char* gemm_mma_build() const;
  // Whether the tensor cores were the device's default rather than asked
  // for: the tuner then keeps a class on the shader GEMM unless a tuning on
  // this device measured them faster.
  bool gemm_mma_auto() const { return gemm_mma_auto_; }
  // The context's T (a ContextExtension made from the context), made on
  // first use: ops::gemm_tuner(ctx) is one.
  template <class T>
  T& extension() {
    std::unique_ptr<ContextExtension>& slot = extensions_[std::type_index(typeid(T))];
    if (!slot) slot = std::make_unique<T>(*this);
    return static_cast<T&>(*slot);
  }
  bool validation() const { return instance_.validation(); }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  VkCommandPool command_pool() const { return pool_; }
  VkPipelineCache pipeline_cache() const { return cache_; }
  // The pipeline cache file ("" when none is kept), and whether it held
  // compiled pipelines for this device when the context opened (false: a
  // cold start, where every kernel compiles on first use).
  const std::string& pipeline_cache_path() const { return cache_path_; }
  bool pipeline_cache_warm() const { return cache_warm_; }

  // The shader variant name for a storage format: "fp16" runs fp16 math,
  // "fp16s" keeps fp16 in memory and computes in fp32.
  std::string variant(Format f) const;
  // The float widths for which every kernel runs with the
  // SignedZeroInfNanPreserve execution mode (spirv_float_controls.hpp):
  // those the device reports shaderSignedZeroInfNanPreserveFloat16/32 for,
  // none with ContextOptions::inf_nan_preserve off.
  FloatControlWidths inf_nan_preserve() const { return inf_nan_preserve_; }

  // A compiled kernel, built once per spec and cached.
  Kernel& kernel(const KernelSpec& spec);
  // The kernel of a shader declared in vkamp/gpu_abi/ (VKAMP_SHADER:
  // its name, buffer count and push constants), typed by its push
  // constants: its build for `fmt`, plus `build` where the shader has
  // others (".texel", ".subgroup", ".coopmat"; cmake/Shaders.cmake).
  template <class Shader>
    requires(Shader::per_format)
  TypedKernel<typename Shader::Push> kernel(Format fmt, std::vector<uint32_t> constants = {},
                                            const std::string& build = "",
                                            std::vector<VkFormat> texel_formats = {}) {
    return TypedKernel<typename Shader::Push>(
        kernel({std::string(Shader::name) + "." + variant(fmt) + build, Shader::buffers,
                TypedKernel<typename Shader::Push>::push_bytes, std::move(constants), std::move(texel_formats)}));
  }
  // The same for a shader built once (VKAMP_SHADER_ONE_BUILD).
  template <class Shader>
    requires(!Shader::per_format)
  TypedKernel<typename Shader::Push> kernel(std::vector<uint32_t> constants = {}) {
    return TypedKernel<typename Shader::Push>(kernel(
        {Shader::name, Shader::buffers, TypedKernel<typename Shader::Push>::push_bytes, std::move(constants), {}}));
  }

  // A memory type with `required` flags, preferring `preferred` ones too.
  uint32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                       VkMemoryPropertyFlags preferred = 0) const;

  // Runs a one-off command buffer to completion (uploads, downloads).
  void run_now(void (*record)(VkCommandBuffer, void*), void* user);
  // Every time the host blocks on the GPU. Training reads this to prove a
  // steady-state step never waits.
  void count_host_wait() { host_waits_.fetch_add(1); }
  uint64_t host_waits() const { return host_waits_.load(); }
  // Waits that only keep the host a bounded number of steps ahead of the
  // GPU (to reuse a command buffer): the queue never drains because of them.
  void count_pacing_wait() { pacing_waits_.fetch_add(1); }
  uint64_t pacing_waits() const { return pacing_waits_.load(); }
  // Device memory held by this context's Memory::Device buffers (Buffer
  // counts its allocation in and out), now and at most so far: what a run
  // needs of a card, beside the driver's own.
  void count_device_bytes(int64_t delta);
  uint64_t device_bytes() const { return device_bytes_.load(); }
  uint64_t peak_device_bytes() const { return peak_device_bytes_.load(); }

 private:
  void save_pipeline_cache();
  KernelPaths paths_;
  bool plan_only_ = false;
  GemmMma gemm_mma_ = GemmMma::off;
  CoopmatApi coopmat_api_ = CoopmatApi::nv;
  bool gemm_mma_auto_ = false;
  std::map<std::type_index, std::unique_ptr<ContextExtension>> extensions_;

  Instance instance_;
  DeviceInfo info_;
  PrecisionPath path_ = PrecisionPath::Unsupported;
  FloatControlWidths inf_nan_preserve_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::string cache_path_;
  bool cache_warm_ = false;
  VkPhysicalDeviceMemoryProperties memory_{};
  std::map<std::string, std::unique_ptr<Kernel>> kernels_;
  std::atomic<uint64_t> host_waits_{0};
  std::atomic<uint64_t> pacing_waits_{0};
  std::atomic<uint64_t> device_bytes_{0}, peak_device_bytes_{0};
};

}  // namespace vkamp
