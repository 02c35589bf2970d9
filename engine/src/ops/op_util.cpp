#include "op_util.hpp"

#include "vkamp/error.hpp"

namespace vkamp::ops::detail {

Kernel& kernel(Sequence& seq, const std::string& shader, Format fmt, uint32_t buffers,
               uint32_t push_bytes, std::vector<uint32_t> constants) {
  Context& ctx = seq.context();
  return ctx.kernel({shader + "." + ctx.variant(fmt), buffers, push_bytes, std::move(constants)});
}

void require(const char* op, const char* operand, const BufferView& v, uint64_t elements,
             size_t bytes_per_element) {
  uint64_t need = elements * bytes_per_element;
  if (v.bytes < need)
    throw Error(std::string(op) + ": " + operand + " holds " + std::to_string(v.bytes) +
                " bytes, needs " + std::to_string(need));
}

}  // namespace vkamp::ops::detail
