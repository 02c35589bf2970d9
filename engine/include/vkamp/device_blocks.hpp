// Device memory in blocks the device allows. Each store (the frozen base,
// the activation and workspace pools, the graph's buffers) places its
// ranges in one address space of block-sized strides, so no range crosses
// a block's end and each is a view of one buffer; each block is then
// allocated at the size its ranges use. A block is at most
// DeviceInfo::max_block() (one allocation bound to one buffer); a range may
// still pass one binding, which the ops take in views (op_util.hpp).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vkamp/buffer.hpp"

namespace vkamp {

class Context;

// Where ranges go: no device involved, so a run is planned before anything
// is allocated.
struct BlockLayout {
  uint64_t block = UINT64_MAX;  // the most one block holds
  uint64_t alignment = 256;     // every range's start

  // The device's: blocks of max_block(), starts at any binding's alignment.
  static BlockLayout of(const Context& ctx);
  // The lowest aligned offset >= `from` where `bytes` fit within one block;
  // vkamp::Error naming `what` when `bytes` is more than a block.
  uint64_t fit(uint64_t from, uint64_t bytes, const std::string& what) const;
  // Appends `bytes` after `end` (the last range's end): its offset.
  uint64_t append(uint64_t& end, uint64_t bytes, const std::string& what) const;
};

class DeviceBlocks {
 public:
  // Blocks holding [0, end) of `layout`'s address space; `what` names the
  // store in out-of-memory errors ("the frozen base").
  DeviceBlocks(Context& ctx, const BlockLayout& layout, uint64_t end, const std::string& what,
               Memory memory = Memory::Device);

  BufferView view(uint64_t offset, uint64_t bytes) const;
  void write(uint64_t offset, const void* src, size_t bytes);
  void read(uint64_t offset, void* dst, size_t bytes) const;
  void fill(uint32_t pattern);
  uint64_t bytes() const;  // allocated, all blocks
  size_t blocks() const { return blocks_.size(); }

 private:
  const Buffer& block_of(uint64_t offset, uint64_t bytes, uint64_t* local) const;

  BlockLayout layout_;
  std::vector<std::unique_ptr<Buffer>> blocks_;
};

}  // namespace vkamp
