// Datasets on the host, before they move to the GPU: IDX files (gzip or
// plain, as in the Debian package dataset-fashion-mnist) and synthetic
// regression data.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace vkamp::train {

class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A classification set: `count` examples of `features` values in [0, 1]
// (images divided by 255) and a label each.
struct ClassificationData {
  uint32_t count = 0, features = 0, classes = 0;
  std::vector<float> x;        // count * features
  std::vector<uint32_t> y;     // count
};

// Reads an IDX file (magic 0x0000080N, dims, big-endian), gzip-compressed
// when it ends in .gz. Throws DataError naming the file on a missing,
// truncated or malformed file. Returns the dims and the raw bytes.
struct IdxArray {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> data;  // unsigned bytes (type 0x08 only)
};
IdxArray read_idx(const std::string& path);
// The same for plain (not gzip) IDX bytes in memory; `label` names them in
// errors (the fuzz target's way in).
IdxArray parse_idx(const uint8_t* bytes, size_t size, const std::string& label);

// train-images-idx3-ubyte(.gz) + train-labels-idx1-ubyte(.gz), or the t10k
// pair when test = true, from `dir`. Labels must be < 10.
ClassificationData load_fashion_mnist(const std::string& dir, bool test);

// y = x . w_true + b_true (+ noise), x ~ U(-1, 1), from a seed.
struct RegressionData {
  uint32_t count = 0, features = 0;
  std::vector<float> x, y, w_true;
  float b_true = 0;
};
RegressionData make_regression(uint32_t count, uint32_t features, uint64_t seed, float noise = 0.0f);

// A learnable classification problem: x ~ N(0, 1), label = arg-max of a
// fixed random linear map of x. Deterministic per seed.
ClassificationData make_classification(uint32_t count, uint32_t features, uint32_t classes, uint64_t seed);

}  // namespace vkamp::train
