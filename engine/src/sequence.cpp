#include "vkamp/sequence.hpp"

#include <vector>

#include "vkamp/context.hpp"
#include "vkamp/error.hpp"
#include "vkamp/kernel.hpp"

namespace vkamp {
namespace {
constexpr uint32_t kSetsPerPool = 256;
constexpr uint32_t kDescriptorsPerPool = 256 * 8;
}  // namespace

Sequence::Sequence(Context& ctx, bool timestamps, uint32_t max_timed) : ctx_(ctx) {
  VkDevice dev = ctx.device();
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = ctx.command_pool();
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VKAMP_VK(vkAllocateCommandBuffers(dev, &ai, &cb_));
  try {
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VKAMP_VK(vkCreateFence(dev, &fci, nullptr, &fence_));
    if (timestamps && ctx.info().timestamps) {
      VkQueryPoolCreateInfo qci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
      qci.queryCount = 2 * max_timed;
      VKAMP_VK(vkCreateQueryPool(dev, &qci, nullptr, &queries_));
      max_timed_ = max_timed;
    }
  } catch (...) {
    if (fence_) vkDestroyFence(dev, fence_, nullptr);
    vkFreeCommandBuffers(dev, ctx.command_pool(), 1, &cb_);
    throw;
  }
}

Sequence::~Sequence() {
  VkDevice dev = ctx_.device();
  if (pending_) vkWaitForFences(dev, 1, &fence_, VK_TRUE, UINT64_MAX);
  for (auto p : pools_) vkDestroyDescriptorPool(dev, p, nullptr);
  for (auto v : texel_views_) vkDestroyBufferView(dev, v, nullptr);
  if (queries_) vkDestroyQueryPool(dev, queries_, nullptr);
  vkDestroyFence(dev, fence_, nullptr);
  vkFreeCommandBuffers(dev, ctx_.command_pool(), 1, &cb_);
}

void Sequence::begin() {
  if (pending_) wait();
  VkDevice dev = ctx_.device();
  for (auto p : pools_) VKAMP_VK(vkResetDescriptorPool(dev, p, 0));
  pool_in_use_ = 0;
  for (auto v : texel_views_) vkDestroyBufferView(dev, v, nullptr);
  texel_views_.clear();
  labels_.clear();
  scratch_.clear();
  scratch_busy_.clear();
  counts_ = {};
  parallel_ = false;
  VKAMP_VK(vkResetCommandBuffer(cb_, 0));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VKAMP_VK(vkBeginCommandBuffer(cb_, &bi));
  if (queries_) vkCmdResetQueryPool(cb_, queries_, 0, 2 * max_timed_);
  recording_ = true;
  recorded_ = false;
}

VkDescriptorSet Sequence::allocate_set(VkDescriptorSetLayout layout) {
  VkDevice dev = ctx_.device();
  for (;;) {
    if (pool_in_use_ == pools_.size()) {
      VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kDescriptorsPerPool},
                                      {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, kDescriptorsPerPool}};
      VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      pci.maxSets = kSetsPerPool;
      pci.poolSizeCount = 2;
      pci.pPoolSizes = sizes;
      VkDescriptorPool pool;
      VKAMP_VK(vkCreateDescriptorPool(dev, &pci, nullptr, &pool));
      pools_.push_back(pool);
    }
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = pools_[pool_in_use_];
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &layout;
    VkDescriptorSet set;
    VkResult r = vkAllocateDescriptorSets(dev, &ai, &set);
    if (r == VK_SUCCESS) return set;
    if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL)
      throw_vk_error(r, "vkAllocateDescriptorSets", __FILE__, __LINE__);
    ++pool_in_use_;  // this pool is full: move to the next (new) one
  }
}

void Sequence::barrier_before_command() {
  if (parallel_ && group_ordered_) return;
  group_ordered_ = parallel_;
  // Every earlier shader or transfer write is visible to every later access.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                     VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  auto stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vkCmdPipelineBarrier(cb_, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
  ++counts_.barriers;
}

void Sequence::dispatch(Kernel& kernel, std::initializer_list<BufferView> buffers, const void* push,
                        uint32_t push_bytes, Groups g, const char* label) {
  if (!recording_) throw Error("Sequence::dispatch outside begin()/end()");
  const KernelSpec& spec = kernel.spec();
  if (buffers.size() != spec.buffers)
    throw Error(spec.shader + " takes " + std::to_string(spec.buffers) + " buffers, got " +
                std::to_string(buffers.size()));
  if (push_bytes != spec.push_bytes)
    throw Error(spec.shader + " takes " + std::to_string(spec.push_bytes) +
                " bytes of push constants, got " + std::to_string(push_bytes));
  if (g.x == 0 || g.y == 0 || g.z == 0) return;  // empty problem: nothing to run

  VkDescriptorSet set = allocate_set(kernel.set_layout());
  std::vector<VkDescriptorBufferInfo> infos(buffers.size());
  std::vector<VkBufferView> views(buffers.size(), VK_NULL_HANDLE);
  std::vector<VkWriteDescriptorSet> writes(buffers.size());
  uint32_t i = 0;
  for (const BufferView& b : buffers) {
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    if (VkFormat f = spec.texel_format(i); f != VK_FORMAT_UNDEFINED) {
      views[i] = texel_view(b, f);
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
      writes[i].pTexelBufferView = &views[i];
    } else {
      infos[i] = {b.buffer->handle(), b.offset, std::max<size_t>(b.bytes, 4)};
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &infos[i];
    }
    ++i;
  }
  vkUpdateDescriptorSets(ctx_.device(), uint32_t(writes.size()), writes.data(), 0, nullptr);

  barrier_before_command();
  bool timed = queries_ && counts_.dispatches < max_timed_;
  if (timed) vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries_, 2 * counts_.dispatches);
  vkCmdBindPipeline(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, kernel.pipeline());
  vkCmdBindDescriptorSets(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, kernel.layout(), 0, 1, &set, 0, nullptr);
  if (push_bytes)
    vkCmdPushConstants(cb_, kernel.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
  vkCmdDispatch(cb_, g.x, g.y, g.z);
  if (timed) vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries_, 2 * counts_.dispatches + 1);
  labels_.push_back(*label ? label : spec.shader);
  ++counts_.dispatches;
}

VkBufferView Sequence::texel_view(const BufferView& b, VkFormat format) {
  if (b.offset % ctx_.info().texel_offset_alignment != 0)
    throw Error("Sequence: a texel buffer view must start at a multiple of " +
                std::to_string(ctx_.info().texel_offset_alignment) + " bytes, not " + std::to_string(b.offset));
  VkBufferViewCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
  ci.buffer = b.buffer->handle();
  ci.format = format;
  ci.offset = b.offset;
  ci.range = b.bytes;
  VkBufferView view;
  VKAMP_VK(vkCreateBufferView(ctx_.device(), &ci, nullptr, &view));
  texel_views_.push_back(view);
  return view;
}

void Sequence::copy(const Buffer& src, const Buffer& dst, size_t bytes, size_t so, size_t dof) {
  if (!recording_) throw Error("Sequence::copy outside begin()/end()");
  if (so + bytes > src.bytes() || dof + bytes > dst.bytes()) throw Error("Sequence::copy out of range");
  barrier_before_command();
  VkBufferCopy region{so, dof, bytes};
  vkCmdCopyBuffer(cb_, src.handle(), dst.handle(), 1, &region);
  ++counts_.copies;
}

BufferView Sequence::scratch(size_t bytes) {
  if (!recording_) throw Error("Sequence::scratch outside begin()/end()");
  // The smallest free buffer that holds `bytes`, else a new one.
  size_t pick = scratch_.size();
  for (size_t i = 0; i < scratch_.size(); ++i)
    if (!scratch_busy_[i] && scratch_[i]->bytes() >= bytes &&
        (pick == scratch_.size() || scratch_[i]->bytes() < scratch_[pick]->bytes()))
      pick = i;
  if (pick == scratch_.size()) {
    scratch_.push_back(std::make_unique<Buffer>(ctx_, bytes));
    scratch_busy_.push_back(false);
  }
  scratch_busy_[pick] = true;
  if (!scopes_.empty()) scopes_.back().push_back(pick);
  return BufferView(*scratch_[pick], 0, bytes);
}

Sequence::ScratchScope::~ScratchScope() {
  std::vector<size_t> mine = std::move(seq_.scopes_.back());
  seq_.scopes_.pop_back();
  // Inside a parallel group the group's later commands may still run
  // beside this scope's: keep them.
  if (seq_.parallel_) return;
  for (size_t i : mine)
    if (i < seq_.scratch_busy_.size()) seq_.scratch_busy_[i] = false;
}

size_t Sequence::scratch_bytes() const {
  size_t total = 0;
  for (const auto& b : scratch_) total += b->bytes();
  return total;
}

void Sequence::fill(const Buffer& dst, uint32_t pattern) {
  if (!recording_) throw Error("Sequence::fill outside begin()/end()");
  barrier_before_command();
  vkCmdFillBuffer(cb_, dst.handle(), 0, VK_WHOLE_SIZE, pattern);
  ++counts_.fills;
}

void Sequence::end() {
  if (!recording_) throw Error("Sequence::end without begin()");
  // Make the results visible to host reads of mapped memory after the fence.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  ++counts_.barriers;
  VKAMP_VK(vkEndCommandBuffer(cb_));
  recording_ = false;
  recorded_ = true;
}

void Sequence::submit() {
  if (!recorded_) throw Error("Sequence::submit before end()");
  if (pending_) wait();
  VKAMP_VK(vkResetFences(ctx_.device(), 1, &fence_));
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb_;
  VKAMP_VK(vkQueueSubmit(ctx_.queue(), 1, &si, fence_));
  pending_ = true;
}

void Sequence::wait() {
  if (!pending_) return;
  ctx_.count_host_wait();
  VKAMP_VK(vkWaitForFences(ctx_.device(), 1, &fence_, VK_TRUE, UINT64_MAX));
  pending_ = false;
}

void Sequence::wait_for_reuse() {
  if (!pending_) return;
  ctx_.count_pacing_wait();
  VKAMP_VK(vkWaitForFences(ctx_.device(), 1, &fence_, VK_TRUE, UINT64_MAX));
  pending_ = false;
}

double Sequence::gpu_ms() const {
  double ms = 0;
  for (auto& t : timings()) ms += t.ms;
  return ms;
}

bool Sequence::poll() {
  if (pending_ && vkGetFenceStatus(ctx_.device(), fence_) == VK_SUCCESS) pending_ = false;
  return !pending_;
}

bool Sequence::done() const {
  return !pending_ || vkGetFenceStatus(ctx_.device(), fence_) == VK_SUCCESS;
}

std::vector<DispatchTime> Sequence::timings() const {
  std::vector<DispatchTime> out;
  uint32_t n = std::min(counts_.dispatches, max_timed_);
  if (!queries_ || n == 0 || pending_) return out;
  std::vector<uint64_t> ticks(2 * n);
  VKAMP_VK(vkGetQueryPoolResults(ctx_.device(), queries_, 0, 2 * n, ticks.size() * 8, ticks.data(), 8,
                                 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  uint64_t mask = ctx_.info().timestamp_valid_bits >= 64 ? ~0ull : ((1ull << ctx_.info().timestamp_valid_bits) - 1);
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t dt = (ticks[2 * i + 1] - ticks[2 * i]) & mask;
    out.push_back({labels_[i], double(dt) * ctx_.info().timestamp_period_ns * 1e-6});
  }
  return out;
}

}  // namespace vkamp
