// One command buffer recorded, submitted and waited for: uploads,
// downloads, the dashboard's font atlas. The buffer comes from `pool` and is
// freed again, whatever happens; a failed call throws vkamp::Error.
#pragma once
#include <functional>
#include <vulkan/vulkan.h>

namespace vkamp {

void run_one_shot(VkDevice device, VkQueue queue, VkCommandPool pool,
                  const std::function<void(VkCommandBuffer)>& record);

}  // namespace vkamp
