#include "vkamp/device_blocks.hpp"

#include <algorithm>

#include "vkamp/context.hpp"
#include "vkamp/error.hpp"

namespace vkamp {

namespace {

std::string mib(uint64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

}  // namespace

BlockLayout BlockLayout::of(const Context& ctx) {
  BlockLayout l;
  l.alignment = std::max<uint64_t>(256, ctx.info().storage_offset_alignment);
  l.block = ctx.info().max_block() / l.alignment * l.alignment;
  return l;
}

uint64_t BlockLayout::fit(uint64_t from, uint64_t bytes, const std::string& what) const {
  if (bytes > block)
    throw Error(what + " takes " + std::to_string(bytes) + " bytes (" + mib(bytes) + "), more than one block of device "
                "memory may hold here (" + std::to_string(block) + " bytes: maxMemoryAllocationSize / maxBufferSize)");
  uint64_t at = (from + alignment - 1) / alignment * alignment;
  if (block != UINT64_MAX && at / block != (at + std::max<uint64_t>(bytes, 1) - 1) / block)
    at = (at / block + 1) * block;  // the next block's start
  return at;
}

uint64_t BlockLayout::append(uint64_t& end, uint64_t bytes, const std::string& what) const {
  const uint64_t at = fit(end, bytes, what);
  end = at + bytes;
  return at;
}

DeviceBlocks::DeviceBlocks(Context& ctx, const BlockLayout& layout, uint64_t end, const std::string& what,
                           Memory memory)
    : layout_(layout) {
  const uint64_t block = layout.block == UINT64_MAX ? std::max<uint64_t>(end, 4) : layout.block;
  for (uint64_t start = 0; start < std::max<uint64_t>(end, 1); start += block)
    blocks_.push_back(std::make_unique<Buffer>(ctx, std::max<uint64_t>(std::min(block, end - std::min(end, start)), 4),
                                               memory, what));
}

const Buffer& DeviceBlocks::block_of(uint64_t offset, uint64_t bytes, uint64_t* local) const {
  const uint64_t block = layout_.block;
  const size_t i = block == UINT64_MAX ? 0 : size_t(offset / block);
  *local = block == UINT64_MAX ? offset : offset % block;
  if (i >= blocks_.size() || *local + bytes > blocks_[i]->bytes())
    throw Error("DeviceBlocks: [" + std::to_string(offset) + ", +" + std::to_string(bytes) + ") is not inside one block");
  return *blocks_[i];
}

BufferView DeviceBlocks::view(uint64_t offset, uint64_t bytes) const {
  uint64_t local;
  const Buffer& b = block_of(offset, bytes, &local);
  return BufferView(b, size_t(local), size_t(bytes));
}

void DeviceBlocks::write(uint64_t offset, const void* src, size_t bytes) {
  uint64_t local;
  const_cast<Buffer&>(block_of(offset, bytes, &local)).write(src, bytes, size_t(local));
}

void DeviceBlocks::read(uint64_t offset, void* dst, size_t bytes) const {
  uint64_t local;
  block_of(offset, bytes, &local).read(dst, bytes, size_t(local));
}

void DeviceBlocks::fill(uint32_t pattern) {
  for (auto& b : blocks_) b->fill(pattern);
}

uint64_t DeviceBlocks::bytes() const {
  uint64_t n = 0;
  for (const auto& b : blocks_) n += b->bytes();
  return n;
}

}  // namespace vkamp
