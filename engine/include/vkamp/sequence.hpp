// Sequence: a command buffer recorded once and replayed many times (Kompute's
// Sequence). Every command is preceded by a compute memory barrier (also the
// first, which orders it after earlier submissions), except the second and
// later commands of a `parallel` group; end() adds one more, for host reads.
// With timestamps on, every dispatch is bracketed by GPU timestamp queries
// that timings() reads after a wait.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>
#include <vulkan/vulkan.h>

#include "vkamp/buffer.hpp"
#include "vkamp/kernel.hpp"

namespace vkamp {

class Context;

struct Groups {
  uint32_t x = 1, y = 1, z = 1;
};

// ceil(n / d), for workgroup counts.
constexpr uint32_t div_up(uint64_t n, uint64_t d) { return uint32_t((n + d - 1) / d); }

// What a recording holds: the counts behind its replay's fixed cost.
struct CommandCounts {
  uint32_t dispatches = 0;  // empty ones (a zero group count) are not recorded
  uint32_t barriers = 0;    // pipeline barriers, end()'s included
  uint32_t copies = 0, fills = 0;

  CommandCounts& operator+=(const CommandCounts& o) {
    dispatches += o.dispatches;
    barriers += o.barriers;
    copies += o.copies;
    fills += o.fills;
    return *this;
  }
};

struct DispatchTime {
  std::string label;
  double ms;
};

class Sequence {
 public:
  explicit Sequence(Context& ctx, bool timestamps = false, uint32_t max_timed_dispatches = 512);
  ~Sequence();
  Sequence(const Sequence&) = delete;
  Sequence& operator=(const Sequence&) = delete;

  // Starts a new recording, dropping the previous one.
  void begin();
  // A kernel from a KernelSpec, its push constants as raw bytes (checked
  // only against the spec's size).
  void dispatch(Kernel& kernel, std::initializer_list<BufferView> buffers, const void* push,
                uint32_t push_bytes, Groups groups, const char* label = "");
  // A kernel of a shader in vkamp/gpu_abi/ (Context::kernel<Shader>()):
  // its push constants are that shader's Push and no other type.
  template <class Push>
  void dispatch(TypedKernel<Push> kernel, std::initializer_list<BufferView> buffers,
                const std::type_identity_t<Push>& push, Groups groups, const char* label = "") {
    dispatch(kernel.kernel(), buffers, &push, TypedKernel<Push>::push_bytes, groups, label);
  }
  // One without push constants.
  void dispatch(TypedKernel<void> kernel, std::initializer_list<BufferView> buffers, Groups groups,
                const char* label = "") {
    dispatch(kernel.kernel(), buffers, nullptr, 0, groups, label);
  }
  // Copies and fills recorded in order with the dispatches.
  void copy(const Buffer& src, const Buffer& dst, size_t bytes, size_t src_offset = 0,
            size_t dst_offset = 0);
  void fill(const Buffer& dst, uint32_t pattern);
  // A device buffer of `bytes` for intermediate results of the commands
  // being recorded (a split-k GEMM's partial sums). It belongs to this
  // recording, so replays never share it with another sequence, and is
  // freed by the next begin(). It is valid until the innermost ScratchScope
  // around the call ends; then later scratch() calls of this recording may
  // reuse it, which is safe because every command waits for the earlier
  // ones (barrier_before_command). A scope that ends inside a parallel
  // group gives nothing back. Without a scope: until the next begin().
  BufferView scratch(size_t bytes);
  // Around an op's scratch and the commands that use it: a recording then
  // holds its largest op's scratch, not every op's at once.
  class ScratchScope {
   public:
    explicit ScratchScope(Sequence& seq) : seq_(seq) { seq_.scopes_.emplace_back(); }
    ~ScratchScope();
    ScratchScope(const ScratchScope&) = delete;
    ScratchScope& operator=(const ScratchScope&) = delete;

   private:
    Sequence& seq_;
  };
  // The device memory this recording's scratch holds.
  size_t scratch_bytes() const;
  // Commands recorded between these two may run concurrently with each
  // other: the group's first command still waits for the earlier ones.
  void begin_parallel() {
    parallel_ = true;
    group_ordered_ = false;
  }
  void end_parallel() { parallel_ = false; }
  void end();

  // Replays the recording. submit() returns at once; wait() blocks (and is
  // counted as a host wait on the context).
  void submit();
  void wait();
  // Waits for the previous replay before reusing this sequence, counted as
  // pacing (the queue stays fed) rather than as a host wait.
  void wait_for_reuse();
  bool pending() const { return pending_; }
  // Non-blocking: true once the last replay has finished (or none is pending).
  bool poll();
  bool done() const;
  void run() { submit(); wait(); }

  Context& context() const { return ctx_; }
  uint32_t dispatch_count() const { return counts_.dispatches; }
  // Of the current or last recording.
  const CommandCounts& counts() const { return counts_; }
  // Per-dispatch GPU time of the last completed run (timestamps on only).
  std::vector<DispatchTime> timings() const;
  // Sum of the per-dispatch times of the last completed run, in ms.
  double gpu_ms() const;

 private:
  void barrier_before_command();
  VkDescriptorSet allocate_set(VkDescriptorSetLayout layout);
  // A view of `b` for a uniform texel buffer binding, kept until the next begin().
  VkBufferView texel_view(const BufferView& b, VkFormat format);

  Context& ctx_;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> pools_;
  std::vector<VkBufferView> texel_views_;
  size_t pool_in_use_ = 0;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  uint32_t max_timed_ = 0;
  std::vector<std::string> labels_;
  std::vector<std::unique_ptr<Buffer>> scratch_;
  std::vector<bool> scratch_busy_;               // per scratch_ buffer
  std::vector<std::vector<size_t>> scopes_;      // per open ScratchScope: the buffers it handed out
  CommandCounts counts_;
  bool recording_ = false, recorded_ = false, pending_ = false, parallel_ = false;
  bool group_ordered_ = false;  // the parallel group's barrier is recorded
};

}  // namespace vkamp
