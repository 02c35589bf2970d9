// vkamp-bench quant: a frozen linear layer's two products (forward and dX)
// with W in the run's 16-bit format against W in ggml blocks
// (bench/quant_bench.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vkamp/float_formats.hpp"
#include "vkamp/quant/ggml_type.hpp"

namespace vkamp::bench {

extern const char* const kQuantHelp;

// A linear layer Y = X W^T: X tokens x in, W out x in.
struct LinearShape {
  uint32_t tokens, in, out;
};
constexpr uint32_t kMaxLayerDim = 65536;  // --layer's largest dimension: a vocabulary's lm_head fits

// The layers a run times: `layers`, else the default ones (--quick: fewer,
// smaller). ConfigError where a row (in) is not whole blocks of a type.
std::vector<LinearShape> quant_layers(std::vector<LinearShape> layers, bool quick,
                                      const std::vector<quant::GgmlType>& types);

// forms: "forward" and/or "dx"; repeats 0: 5 (3 where a dispatch is slow);
// paths: kernel-path settings, a context each (empty: the default).
// Returns the process exit status.
int run_quant(const std::string& device, int repeats, Format fmt, const std::vector<quant::GgmlType>& types,
              const std::vector<std::string>& forms, std::vector<LinearShape> layers, bool quick,
              std::vector<std::string> paths);

}  // namespace vkamp::bench
