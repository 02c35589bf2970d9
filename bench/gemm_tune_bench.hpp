// vkamp-bench gemm --tune and quant --tune: the GEMM tuner's sweeps
// (bench/gemm_tune_bench.cpp).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "quant_bench.hpp"
#include "vkamp/quant/ggml_type.hpp"

namespace vkamp::bench {

// shapes: MxNxK, each form's product M x N summing K (empty: the layers of
// charlm medium and the MLP, and square ones); forms from forward, dx, dw; budget_s: the
// most time one class's timings may take. Returns the exit status.
int run_gemm_tune(const std::string& device, const std::vector<std::array<uint32_t, 3>>& shapes,
                  const std::vector<std::string>& forms, double budget_s);
// The same for a frozen layer's W in each of `types`' blocks: per class of
// the layers' forward and dX products (forms "forward", "dx"), every path of
// gemm.comp's ".quant" build (ops::gemm_quant_candidates).
int run_quant_tune(const std::string& device, const std::vector<LinearShape>& layers,
                   const std::vector<quant::GgmlType>& types, const std::vector<std::string>& forms, double budget_s);

}  // namespace vkamp::bench
