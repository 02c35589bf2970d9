// What timing a kernel takes, for the GEMM tuner and the benchmarks alike:
// operands of random values and the median of repeated runs.
#pragma once
#include <cstddef>
#include <random>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/quant/ggml_type.hpp"

namespace vkamp {

// A device buffer of n random values in [-1, 1), in the format.
Buffer random_buffer(Context& ctx, Format fmt, size_t n, std::mt19937& gen);
// n random values in [-1, 1) quantized to ggml blocks of type t (n whole
// blocks), the buffer padded to whole 32-bit words as the GEMM reads them.
Buffer random_blocks(Context& ctx, quant::GgmlType t, size_t n, std::mt19937& gen);

// The median of v (the mean of the middle two for an even count; 0 if empty).
double median(std::vector<double> v);

}  // namespace vkamp
