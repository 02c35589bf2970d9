#include "vkamp/ops/dequantize.hpp"

#include "op_util.hpp"
#include "vkamp/error.hpp"
#include "vkamp/gpu_abi/dequantize.h"

namespace vkamp::ops {

std::vector<uint32_t> with_quant_type(std::vector<uint32_t> constants, quant::GgmlType t) {
  if (constants.size() <= kQuantTypeConstantId) constants.resize(kQuantTypeConstantId + 1, 0);
  constants[kQuantTypeConstantId] = uint32_t(t);
  return constants;
}

void dequantize(Sequence& seq, quant::GgmlType t, BufferView blocks, BufferView out, uint32_t n) {
  const quant::GgmlTypeInfo& info = quant::ggml_type_info(t);
  if (n % info.block_values != 0)
    throw Error("dequantize: " + std::to_string(n) + " values are not a whole number of " + info.name + " blocks");
  if (n > detail::kMaxIndexedElements) throw Error("dequantize: " + std::to_string(n) + " values are too many for one dispatch");
  const uint64_t words = (quant::ggml_row_bytes(t, n) + 3) / 4;
  detail::require("dequantize", "blocks", blocks, words, 4);
  detail::require("dequantize", "out", out, n, 4);
  if (blocks.offset % 4 != 0) throw Error("dequantize: the blocks' offset is not a multiple of 4 bytes");
  auto k = seq.context().kernel<shader::DequantizeShader>(with_quant_type({}, t));
  seq.dispatch(k, {blocks, out}, shader::DequantizePush{n}, detail::grid_stride_groups(n), "dequantize");
}

}  // namespace vkamp::ops
