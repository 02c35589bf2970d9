// Buffer: a storage buffer on the device (Kompute's Tensor, minus the shape).
// Device buffers live in device-local memory; on unified-memory devices
// (integrated GPUs, CPU drivers) that memory is mapped directly, elsewhere
// reads and writes go through a staging buffer. Host buffers are
// host-visible and always mapped, for data the host reads while the GPU runs.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkamp {

class Context;

enum class Memory { Device, Host };

class Buffer {
 public:
  // `what` names the buffer's purpose in errors ("the frozen base"). More
  // than the device allows in one allocation or buffer is a vkamp::Error,
  // as is running out of memory.
  Buffer(Context& ctx, size_t bytes, Memory memory = Memory::Device, const std::string& what = "");
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&&) = delete;

  VkBuffer handle() const { return buffer_; }
  size_t bytes() const { return bytes_; }
  bool mapped() const { return mapped_ != nullptr; }
  Context& context() const { return *ctx_; }

  // Blocking copies; a staged copy counts as a host wait.
  void write(const void* src, size_t bytes, size_t offset = 0);
  void read(void* dst, size_t bytes, size_t offset = 0) const;
  // Every byte set to the 32-bit pattern (poisoning outputs in tests).
  void fill(uint32_t pattern);

  template <class T>
  void write(std::span<const T> v, size_t offset = 0) { write(v.data(), v.size_bytes(), offset); }
  template <class T>
  void write(const std::vector<T>& v, size_t offset = 0) { write(v.data(), v.size() * sizeof(T), offset); }
  template <class T>
  std::vector<T> read() const {
    std::vector<T> v(bytes_ / sizeof(T));
    read(v.data(), v.size() * sizeof(T));
    return v;
  }

 private:
  Context* ctx_;
  size_t bytes_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  void* mapped_ = nullptr;
  size_t device_bytes_ = 0;  // the allocation, when it is Memory::Device (Context::device_bytes)
};

// A byte range of a buffer, bound as one storage buffer.
struct BufferView {
  const Buffer* buffer = nullptr;
  size_t offset = 0;
  size_t bytes = VK_WHOLE_SIZE;
  BufferView(const Buffer& b) : buffer(&b), bytes(b.bytes()) {}  // NOLINT: implicit by design
  BufferView(const Buffer& b, size_t off, size_t n) : buffer(&b), offset(off), bytes(n) {}
};

}  // namespace vkamp
