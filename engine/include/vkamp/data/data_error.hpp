// The error for a data file that cannot be used (missing, truncated,
// malformed, or values the model cannot take): the message names the file
// and, where it can, the line or index. Binaries print it and exit with
// status 2.
#pragma once
#include <stdexcept>

namespace vkamp::data {

class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace vkamp::data
