// Adds the SignedZeroInfNanPreserve execution mode to a SPIR-V compute
// module, so that one embedded module serves devices with and without the
// mode (no ".preserve" build of every shader).
//
// Why: unless a module sets the mode, SPIR-V lets a driver assume that no
// float is inf or NaN and that -0 == +0 everywhere; NVIDIA's compiler folds
// `v > 0 ? v : (v <= 0 ? 0 : v)` into max(v, 0), which turns NaN into 0 and
// hides an overflow from loss scaling. The shaders' inf/NaN decisions test
// exponent bits (shaders/common/nonfinite.glsl), which no mode is needed
// for; the mode also keeps the arithmetic around them IEEE.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace vkamp {

struct FloatControlWidths {
  bool fp16 = false;  // added only to modules that declare the Float16 capability
  bool fp32 = false;
  bool any() const { return fp16 || fp32; }
};

// The module with OpCapability SignedZeroInfNanPreserve, OpExtension
// "SPV_KHR_float_controls" (for SPIR-V before 1.4) and one OpExecutionMode
// SignedZeroInfNanPreserve per width and entry point; pieces the module
// already has are not repeated. Throws vkamp::Error on a malformed module.
std::vector<uint32_t> with_inf_nan_preserve(std::span<const uint32_t> words, FloatControlWidths widths);

// The widths (16, 32, 64) for which `words` sets SignedZeroInfNanPreserve.
std::vector<uint32_t> inf_nan_preserve_widths(std::span<const uint32_t> words);

}  // namespace vkamp
