// Kernel: one compute pipeline built from an embedded shader, with its
// descriptor layout (buffers at bindings 0..n-1: storage buffers, or uniform
// texel buffers where texel_formats names a format), push constants and
// specialization constants (constant_id 0..k-1, 32-bit each).
// TypedKernel: a Kernel bound to its push-constant type, as
// Context::kernel<Shader>() returns it for a shader declared in
// vkamp/gpu_abi/ (name, buffer count and push block written once).
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkamp {

class Context;

struct KernelSpec {
  std::string shader;               // "gemm.fp16"
  uint32_t buffers = 0;             // storage buffers, bindings 0..buffers-1
  uint32_t push_bytes = 0;          // push-constant block size
  std::vector<uint32_t> constants;  // specialization constants, ids 0..k-1
  // Binding i < size() with a format other than VK_FORMAT_UNDEFINED is a
  // uniform texel buffer read through that format (Sequence makes the view).
  std::vector<VkFormat> texel_formats;

  VkFormat texel_format(uint32_t binding) const {
    return binding < texel_formats.size() ? texel_formats[binding] : VK_FORMAT_UNDEFINED;
  }

  std::string key() const;
};

class Kernel {
 public:
  Kernel(Context& ctx, const KernelSpec& spec);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  const KernelSpec& spec() const { return spec_; }
  VkPipeline pipeline() const { return pipeline_; }
  VkPipelineLayout layout() const { return layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }

 private:
  void build(Context& ctx);
  void destroy();

  VkDevice device_;
  KernelSpec spec_;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
};

// A Kernel whose push constants are a `Push` (void: none). Sequence::dispatch
// takes it only with a Push, so a kernel cannot be run with another
// shader's block; it does not convert to Kernel&.
template <class Push>
class TypedKernel {
 public:
  static constexpr uint32_t push_bytes = [] {
    if constexpr (std::is_void_v<Push>) return 0u;
    else return uint32_t(sizeof(Push));
  }();

  explicit TypedKernel(Kernel& kernel) : kernel_(&kernel) {}
  Kernel& kernel() const { return *kernel_; }

 private:
  Kernel* kernel_;
};

}  // namespace vkamp
