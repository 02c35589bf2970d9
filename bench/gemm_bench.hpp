// vkamp-bench gemm: the three GEMMs of a linear layer in training
// (forward, dX, dW) per storage format and kernel path (bench/gemm_bench.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vkamp/float_formats.hpp"

namespace vkamp::bench {

extern const char* const kGemmHelp;

enum class GemmForm { Forward, BackwardInput, BackwardWeight };
// The form's name in --forms and gemm_peer.py's --form.
const char* form_flag(GemmForm f);

struct GemmShape {
  uint32_t m, n, k;
};
constexpr uint32_t kMaxShapeDim = 8192;
// "MxNxK", each dimension a whole number from 1 to `max` (at most 5 digits).
std::optional<GemmShape> parse_shape(const std::string& text, uint32_t max = kMaxShapeDim);

// repeats 0: automatic; paths: kernel paths (kernel_paths_from_settings),
// empty for the default alone. Returns the process exit status.
int run_gemm(const std::string& device, int repeats, double max_dispatch_s, bool quick, bool peer,
             std::vector<Format> formats, const std::vector<GemmForm>& forms, const std::vector<GemmShape>& shapes,
             std::vector<std::string> paths);

}  // namespace vkamp::bench
