// fp32 rows to ggml's tensor blocks (used to quantize a Hugging Face
// model's weights on loading, `--quantize q4_k`). Every type's blocks are
// byte for byte those of ggml's reference quantizers, quantize_row_*_ref
// in ggml-quants.c (what ggml_quantize_chunk writes without an importance
// matrix); tests/quant/ checks them against ggml's own bytes.
#pragma once
#include <cstdint>

#include "vkamp/quant/ggml_type.hpp"

namespace vkamp::quant {

// blocks[0..ggml_row_bytes(t, n)) from x[0..n); n a multiple of the type's
// block values. std::invalid_argument, naming the type and the value's
// index, for an inf or NaN in x, for a block whose fp16 scale would
// overflow (values too large for the type), and for n not a whole number
// of blocks. The caller names the tensor.
void quantize_row(GgmlType t, const float* x, uint8_t* blocks, uint64_t n);
// The same bytes, its blocks shared among the host's cores (a k-quant takes
// about 5 M values a second on one: minutes for a 1B-parameter base).
void quantize_rows_in_parallel(GgmlType t, const float* x, uint8_t* blocks, uint64_t n);

}  // namespace vkamp::quant
