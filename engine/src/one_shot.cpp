#include "vkamp/one_shot.hpp"

#include "vkamp/error.hpp"

namespace vkamp {

void run_one_shot(VkDevice device, VkQueue queue, VkCommandPool pool,
                  const std::function<void(VkCommandBuffer)>& record) {
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb;
  VKAMP_VK(vkAllocateCommandBuffers(device, &ai, &cb));
  VkFence fence = VK_NULL_HANDLE;
  VkResult r = VK_SUCCESS;
  do {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if ((r = vkBeginCommandBuffer(cb, &bi)) != VK_SUCCESS) break;
    record(cb);
    if ((r = vkEndCommandBuffer(cb)) != VK_SUCCESS) break;
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if ((r = vkCreateFence(device, &fci, nullptr, &fence)) != VK_SUCCESS) break;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    if ((r = vkQueueSubmit(queue, 1, &si, fence)) != VK_SUCCESS) break;
    r = vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX);
  } while (false);
  if (fence) vkDestroyFence(device, fence, nullptr);
  vkFreeCommandBuffers(device, pool, 1, &cb);
  if (r != VK_SUCCESS) throw_vk_error(r, "run_one_shot", __FILE__, __LINE__);
}

}  // namespace vkamp
