// Arrays (from .npy, .npz or IDX files) to LabeledData. x is N x F (a table)
// or N x H x W x C (images; example_shape {H, W, C}); uint8 x is divided by
// 255 into [0, 1], as images are. y, when given, is N class ids (an integer
// dtype, for Classify; N x 1 also accepted) or N or N x K float targets
// (Regress).
#pragma once
#include <string>

#include "vkamp/data/labeled_data.hpp"
#include "vkamp/data/npy.hpp"

namespace vkamp::data {

// `x_label` and `y_label` name the arrays in errors ("d.npz: x.npy").
// y may be null: x only, no labels or targets. Throws DataError.
LabeledData labeled_from_arrays(const NpyArray& x, const NpyArray* y, const std::string& x_label,
                                const std::string& y_label, const LoadOptions& opt);

}  // namespace vkamp::data
