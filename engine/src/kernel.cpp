#include "vkamp/kernel.hpp"

#include "vkamp/context.hpp"
#include "vkamp/error.hpp"
#include "vkamp/shader_registry.hpp"
#include "vkamp/spirv_float_controls.hpp"

namespace vkamp {

std::string KernelSpec::key() const {
  std::string k = shader + "/" + std::to_string(buffers) + "/" + std::to_string(push_bytes);
  for (uint32_t c : constants) k += "/" + std::to_string(c);
  for (VkFormat f : texel_formats) k += "/t" + std::to_string(int(f));
  return k;
}

Kernel::Kernel(Context& ctx, const KernelSpec& spec) : device_(ctx.device()), spec_(spec) {
  try {
    build(ctx);
  } catch (...) {
    destroy();
    throw;
  }
}

void Kernel::build(Context& ctx) {
  const KernelSpec& spec = spec_;
  const ShaderCode* code = find_shader(spec.shader);
  if (!code) throw Error("no embedded shader named \"" + spec.shader + "\"");

  std::span<const uint32_t> words(code->words, code->word_count);
  std::vector<uint32_t> patched;
  if (ctx.inf_nan_preserve().any()) {
    patched = with_inf_nan_preserve(words, ctx.inf_nan_preserve());
    words = patched;
  }
  VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smci.codeSize = words.size() * sizeof(uint32_t);
  smci.pCode = words.data();
  VKAMP_VK(vkCreateShaderModule(device_, &smci, nullptr, &module_));

  std::vector<VkDescriptorSetLayoutBinding> bindings(spec.buffers);
  for (uint32_t i = 0; i < spec.buffers; ++i)
    bindings[i] = {i,
                   spec.texel_format(i) == VK_FORMAT_UNDEFINED ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                                                               : VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
                   1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo dslci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dslci.bindingCount = spec.buffers;
  dslci.pBindings = bindings.data();
  VKAMP_VK(vkCreateDescriptorSetLayout(device_, &dslci, nullptr, &set_layout_));

  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, spec.push_bytes};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &set_layout_;
  plci.pushConstantRangeCount = spec.push_bytes ? 1 : 0;
  plci.pPushConstantRanges = &range;
  VKAMP_VK(vkCreatePipelineLayout(device_, &plci, nullptr, &layout_));

  std::vector<VkSpecializationMapEntry> entries(spec.constants.size());
  for (uint32_t i = 0; i < entries.size(); ++i) entries[i] = {i, i * 4u, 4};
  VkSpecializationInfo si{uint32_t(entries.size()), entries.data(), spec.constants.size() * 4,
                          spec.constants.data()};

  VkComputePipelineCreateInfo cpci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpci.stage.module = module_;
  cpci.stage.pName = "main";
  cpci.stage.pSpecializationInfo = entries.empty() ? nullptr : &si;
  cpci.layout = layout_;
  VKAMP_VK(vkCreateComputePipelines(device_, ctx.pipeline_cache(), 1, &cpci, nullptr, &pipeline_));
}

Kernel::~Kernel() { destroy(); }

void Kernel::destroy() {
  vkDestroyPipeline(device_, pipeline_, nullptr);
  vkDestroyPipelineLayout(device_, layout_, nullptr);
  vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
  vkDestroyShaderModule(device_, module_, nullptr);
}

}  // namespace vkamp
