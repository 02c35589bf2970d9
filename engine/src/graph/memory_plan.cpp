#include "vkamp/graph/memory_plan.hpp"

#include <algorithm>
#include <numeric>

namespace vkamp::graph {

MemoryPlan plan_memory(const std::vector<Lifetime>& buffers, const BlockLayout& blocks) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t(0));
  // Largest first (ties: earliest first) packs better than arrival order.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });
  const uint64_t alignment = blocks.alignment;
  auto round_up = [&](uint64_t v) { return (v + alignment - 1) / alignment * alignment; };
  std::vector<size_t> placed;
  for (size_t i : order) {
    const Lifetime& b = buffers[i];
    const std::string what = "an activation buffer";
    plan.unshared_bytes += round_up(b.bytes);
    // The byte ranges of placed buffers alive at the same time, by offset.
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (size_t j : placed)
      if (buffers[j].first <= b.last && b.first <= buffers[j].last)
        busy.push_back({plan.offsets[j], plan.offsets[j] + buffers[j].bytes});
    std::sort(busy.begin(), busy.end());
    uint64_t offset = blocks.fit(0, b.bytes, what);
    for (auto [begin, end] : busy) {
      if (offset + b.bytes <= begin) break;  // fits in the gap before this range
      offset = blocks.fit(std::max(offset, end), b.bytes, what);
    }
    plan.offsets[i] = offset;
    plan.pool_bytes = std::max(plan.pool_bytes, round_up(offset + b.bytes));
    placed.push_back(i);
  }
  return plan;
}

}  // namespace vkamp::graph
