#include "offscreen_target.hpp"

#include <cstring>

#include <stb/stb_image_write.h>

#include "vkamp/error.hpp"
#include "vkamp/platform/files.hpp"

namespace vkamp::ui {

OffscreenTarget::OffscreenTarget(GuiDevice& dev, uint32_t width, uint32_t height, VkFormat format)
    : dev_(dev), width_(width), height_(height), format_(format) {
  if (width == 0 || height == 0 || width > 8192 || height > 8192)
    throw Error("picture size " + std::to_string(width) + "x" + std::to_string(height) +
                " is out of range (1 to 8192 pixels a side)");
  VkDevice d = dev.device();
  VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ii.imageType = VK_IMAGE_TYPE_2D;
  ii.format = format;
  ii.extent = {width, height, 1};
  ii.mipLevels = 1;
  ii.arrayLayers = 1;
  ii.samples = VK_SAMPLE_COUNT_1_BIT;
  ii.tiling = VK_IMAGE_TILING_OPTIMAL;
  ii.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
  ii.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  VKAMP_VK(vkCreateImage(d, &ii, nullptr, &image_));
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(d, image_, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = dev.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  VKAMP_VK(vkAllocateMemory(d, &ai, nullptr, &image_memory_));
  VKAMP_VK(vkBindImageMemory(d, image_, image_memory_, 0));

  VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  vi.image = image_;
  vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vi.format = format;
  vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  VKAMP_VK(vkCreateImageView(d, &vi, nullptr, &view_));

  VkAttachmentDescription color{};
  color.format = format;
  color.samples = VK_SAMPLE_COUNT_1_BIT;
  color.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  color.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  color.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  color.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  color.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  color.finalLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
  VkAttachmentReference ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
  VkSubpassDescription sub{};
  sub.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
  sub.colorAttachmentCount = 1;
  sub.pColorAttachments = &ref;
  // The same dependency as ImGui's window render pass: the validation layer
  // counts dependencies in render-pass compatibility, and ImGui's pipeline
  // must be usable in both. The copy is ordered by a barrier after the pass.
  VkSubpassDependency dep{};
  dep.srcSubpass = VK_SUBPASS_EXTERNAL;
  dep.dstSubpass = 0;
  dep.srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  dep.dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  dep.srcAccessMask = 0;
  dep.dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  VkRenderPassCreateInfo rp{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
  rp.attachmentCount = 1;
  rp.pAttachments = &color;
  rp.subpassCount = 1;
  rp.pSubpasses = &sub;
  rp.dependencyCount = 1;
  rp.pDependencies = &dep;
  VKAMP_VK(vkCreateRenderPass(d, &rp, nullptr, &pass_));

  VkFramebufferCreateInfo fi{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
  fi.renderPass = pass_;
  fi.attachmentCount = 1;
  fi.pAttachments = &view_;
  fi.width = width;
  fi.height = height;
  fi.layers = 1;
  VKAMP_VK(vkCreateFramebuffer(d, &fi, nullptr, &framebuffer_));

  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = VkDeviceSize(width) * height * 4;
  bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  VKAMP_VK(vkCreateBuffer(d, &bi, nullptr, &readback_));
  vkGetBufferMemoryRequirements(d, readback_, &req);
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = dev.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                               VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  VKAMP_VK(vkAllocateMemory(d, &ai, nullptr, &readback_memory_));
  VKAMP_VK(vkBindBufferMemory(d, readback_, readback_memory_, 0));
}

OffscreenTarget::~OffscreenTarget() {
  VkDevice d = dev_.device();
  vkDeviceWaitIdle(d);
  vkDestroyBuffer(d, readback_, nullptr);
  vkFreeMemory(d, readback_memory_, nullptr);
  vkDestroyFramebuffer(d, framebuffer_, nullptr);
  vkDestroyRenderPass(d, pass_, nullptr);
  vkDestroyImageView(d, view_, nullptr);
  vkDestroyImage(d, image_, nullptr);
  vkFreeMemory(d, image_memory_, nullptr);
}

std::vector<uint8_t> OffscreenTarget::render(const std::function<void(VkCommandBuffer)>& draw) {
  dev_.run_now([&](VkCommandBuffer cmd) {
    VkClearValue clear{};
    clear.color = {{0.09f, 0.09f, 0.11f, 1.0f}};
    VkRenderPassBeginInfo rb{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    rb.renderPass = pass_;
    rb.framebuffer = framebuffer_;
    rb.renderArea.extent = {width_, height_};
    rb.clearValueCount = 1;
    rb.pClearValues = &clear;
    vkCmdBeginRenderPass(cmd, &rb, VK_SUBPASS_CONTENTS_INLINE);
    draw(cmd);
    vkCmdEndRenderPass(cmd);
    VkImageMemoryBarrier to_copy{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    to_copy.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    to_copy.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    to_copy.oldLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    to_copy.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    to_copy.srcQueueFamilyIndex = to_copy.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    to_copy.image = image_;
    to_copy.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0,
                         nullptr, 0, nullptr, 1, &to_copy);
    VkBufferImageCopy copy{};
    copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    copy.imageExtent = {width_, height_, 1};
    vkCmdCopyImageToBuffer(cmd, image_, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback_, 1, &copy);
    VkBufferMemoryBarrier host{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
    host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    host.srcQueueFamilyIndex = host.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    host.buffer = readback_;
    host.size = VK_WHOLE_SIZE;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0, nullptr, 1, &host, 0,
                         nullptr);
  });
  std::vector<uint8_t> pixels(size_t(width_) * height_ * 4);
  void* p = nullptr;
  VKAMP_VK(vkMapMemory(dev_.device(), readback_memory_, 0, VK_WHOLE_SIZE, 0, &p));
  std::memcpy(pixels.data(), p, pixels.size());
  vkUnmapMemory(dev_.device(), readback_memory_);
  if (format_ == VK_FORMAT_B8G8R8A8_UNORM || format_ == VK_FORMAT_B8G8R8A8_SRGB)
    for (size_t i = 0; i < pixels.size(); i += 4) std::swap(pixels[i], pixels[i + 2]);
  return pixels;
}

void write_png(const std::string& path, uint32_t width, uint32_t height, const std::vector<uint8_t>& rgba) {
  // Encoded in memory, then written through the platform layer: stb's own
  // fopen would read a UTF-8 name in Windows' ANSI code page ("capture
  // d'écran.png" came out as "capture d'Ã©cran.png"), and an old picture is
  // replaced whole or not at all.
  std::vector<uint8_t> png;
  auto append = [](void* out, void* data, int n) {
    auto* bytes = static_cast<uint8_t*>(data);
    static_cast<std::vector<uint8_t>*>(out)->insert(static_cast<std::vector<uint8_t>*>(out)->end(), bytes, bytes + n);
  };
  if (!stbi_write_png_to_func(append, &png, int(width), int(height), 4, rgba.data(), int(width * 4)))
    throw Error("cannot encode the picture " + path);
  try {
    platform::ReplacingFile file(path);
    file.write(png.data(), png.size());
    file.commit();
  } catch (const platform::FileError& e) {
    throw Error("cannot write the picture " + path + ": " + e.what());
  }
}

}  // namespace vkamp::ui
