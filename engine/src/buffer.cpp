#include "vkamp/buffer.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "vkamp/context.hpp"
#include "vkamp/error.hpp"

namespace vkamp {

Buffer::Buffer(Context& ctx, size_t bytes, Memory memory, const std::string& what) : ctx_(&ctx), bytes_(bytes) {
  VkDevice dev = ctx.device();
  // Vulkan forbids empty buffers and fills in 4-byte words.
  size_t alloc = std::max<size_t>(4, (bytes + 3) & ~size_t(3));
  const std::string named = what.empty() ? "a " + std::to_string(bytes) + "-byte buffer"
                                         : what + " (" + std::to_string(bytes) + " bytes)";
  if (alloc > ctx.info().max_block())
    throw Error(named + " is more than " + ctx.info().name + " allows in one allocation (" +
                std::to_string(ctx.info().max_block()) + " bytes: maxMemoryAllocationSize / maxBufferSize" +
                (ctx.info().capped.empty() ? "" : ", lowered by " + ctx.info().capped) + ")");
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = alloc;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
              VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
              VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  const VkResult created = vkCreateBuffer(dev, &bci, nullptr, &buffer_);
  if (created == VK_ERROR_OUT_OF_DEVICE_MEMORY || created == VK_ERROR_OUT_OF_HOST_MEMORY)
    throw Error("out of device memory creating " + named + " on " + ctx.info().name +
                " (another program may hold the memory)");
  VKAMP_VK(created);

  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, buffer_, &req);
  constexpr auto kHost = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t type;
  bool map = true;
  try {
    if (memory == Memory::Host)
      type = ctx.memory_type(req.memoryTypeBits, kHost, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    else if (ctx.info().unified_memory)
      type = ctx.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | kHost);
    else {
      type = ctx.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
      map = false;
    }
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = type;
    VkResult r = vkAllocateMemory(dev, &mai, nullptr, &memory_);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
      throw Error("out of device memory allocating " + named + " on " + ctx.info().name +
                  " (another program may hold the memory)");
    VKAMP_VK(r);
    VKAMP_VK(vkBindBufferMemory(dev, buffer_, memory_, 0));
    if (map) VKAMP_VK(vkMapMemory(dev, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_));
    if (memory == Memory::Device) {
      device_bytes_ = req.size;
      ctx.count_device_bytes(int64_t(device_bytes_));
    }
  } catch (...) {
    if (memory_) vkFreeMemory(dev, memory_, nullptr);
    vkDestroyBuffer(dev, buffer_, nullptr);
    throw;
  }
}

Buffer::Buffer(Buffer&& o) noexcept
    : ctx_(o.ctx_), bytes_(o.bytes_), buffer_(std::exchange(o.buffer_, VK_NULL_HANDLE)),
      memory_(std::exchange(o.memory_, VK_NULL_HANDLE)), mapped_(std::exchange(o.mapped_, nullptr)),
      device_bytes_(std::exchange(o.device_bytes_, 0)) {}

Buffer::~Buffer() {
  if (!buffer_) return;
  if (device_bytes_) ctx_->count_device_bytes(-int64_t(device_bytes_));
  VkDevice dev = ctx_->device();
  if (mapped_) vkUnmapMemory(dev, memory_);
  vkDestroyBuffer(dev, buffer_, nullptr);
  vkFreeMemory(dev, memory_, nullptr);
}

namespace {

struct Copy {
  VkBuffer src, dst;
  VkBufferCopy region;
};

void record_copy(VkCommandBuffer cb, void* user) {
  auto* c = static_cast<Copy*>(user);
  vkCmdCopyBuffer(cb, c->src, c->dst, 1, &c->region);
}

// Staged copies go through pieces of at most 64 MiB (and one allocation).
size_t staging_piece(const Context& ctx) {
  return size_t(std::min<uint64_t>(64ull << 20, ctx.info().max_block() / 4 * 4));
}

void check_range(size_t offset, size_t n, size_t size) {
  if (offset > size || n > size - offset)
    throw Error("buffer access [" + std::to_string(offset) + ", " + std::to_string(offset + n) +
                ") is outside the " + std::to_string(size) + "-byte buffer");
}

}  // namespace

void Buffer::write(const void* src, size_t n, size_t offset) {
  check_range(offset, n, bytes_);
  if (n == 0) return;
  if (mapped_) {
    std::memcpy(static_cast<char*>(mapped_) + offset, src, n);
    return;
  }
  // Through a staging buffer of at most staging_piece(): never a second whole
  // copy of a large tensor in host-visible memory.
  const size_t piece = std::min(n, staging_piece(*ctx_));
  Buffer staging(*ctx_, piece, Memory::Host);
  for (size_t done = 0; done < n; done += piece) {
    const size_t m = std::min(piece, n - done);
    staging.write(static_cast<const char*>(src) + done, m);
    Copy c{staging.handle(), buffer_, {0, offset + done, m}};
    ctx_->run_now(record_copy, &c);
  }
}

void Buffer::read(void* dst, size_t n, size_t offset) const {
  check_range(offset, n, bytes_);
  if (n == 0) return;
  if (mapped_) {
    std::memcpy(dst, static_cast<const char*>(mapped_) + offset, n);
    return;
  }
  const size_t piece = std::min(n, staging_piece(*ctx_));
  Buffer staging(*ctx_, piece, Memory::Host);
  for (size_t done = 0; done < n; done += piece) {
    const size_t m = std::min(piece, n - done);
    Copy c{buffer_, staging.handle(), {offset + done, 0, m}};
    ctx_->run_now(record_copy, &c);
    staging.read(static_cast<char*>(dst) + done, m);
  }
}

void Buffer::fill(uint32_t pattern) {
  struct Fill {
    VkBuffer b;
    uint32_t p;
  } f{buffer_, pattern};
  ctx_->run_now([](VkCommandBuffer cb, void* u) {
    auto* f = static_cast<Fill*>(u);
    vkCmdFillBuffer(cb, f->b, 0, VK_WHOLE_SIZE, f->p);
  }, &f);
}

}  // namespace vkamp
