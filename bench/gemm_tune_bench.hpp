// vkamp-bench gemm --tune: the GEMM tuner's sweep (bench/gemm_tune_bench.cpp).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace vkamp::bench {

// shapes: MxNxK, each form's product M x N summing K (empty: the layers of
// charlm medium and the MLP, and square ones); forms from forward, dx, dw; budget_s: the
// most time one class's timings may take. Returns the exit status.
int run_gemm_tune(const std::string& device, const std::vector<std::array<uint32_t, 3>>& shapes,
                  const std::vector<std::string>& forms, double budget_s);

}  // namespace vkamp::bench
