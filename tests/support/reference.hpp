// CPU references in double, written from the definitions rather than from
// the engine's code, so a shared mistake cannot hide.
#pragma once
#include <cstdint>
#include <vector>

#include "vkamp/float_formats.hpp"

namespace vkamp::test {

// Value of a 16-bit pattern, from the format's definition.
double decode_reference(Format fmt, uint16_t bits);
// x rounded to the nearest value of fmt, ties to the even pattern; past the
// largest finite value (by half an ulp or more) it is inf; NaN stays NaN.
double round_reference(Format fmt, double x);

// Inputs rounded to the storage format, as doubles.
std::vector<double> to_double(const std::vector<float>& v);

}  // namespace vkamp::test
