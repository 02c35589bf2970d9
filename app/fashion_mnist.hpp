// Fashion-MNIST from IDX files (the Debian package dataset-fashion-mnist):
// the samples' default data set.
#pragma once
#include <string>

#include "vkamp/data/dataset.hpp"

namespace vkamp::app {

// train-images-idx3-ubyte(.gz) + train-labels-idx1-ubyte(.gz), or the t10k
// pair when test = true, from `dir`; pixels divided by 255. Labels must be
// < 10. Throws data::DataError naming the file.
data::ClassificationData load_fashion_mnist(const std::string& dir, bool test);

}  // namespace vkamp::app
