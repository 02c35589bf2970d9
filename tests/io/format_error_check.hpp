// The check both io test files make of a bad input: the call throws an
// io::FormatError whose message names `label` (the file) and says `phrase`.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "vkamp/io/safetensors.hpp"

namespace vkamp::test {

template <class Call>
::testing::AssertionResult rejected_with(Call&& call, const std::string& label, const std::string& phrase) {
  try {
    call();
  } catch (const io::FormatError& e) {
    std::string m = e.what();
    if (m.find(label) == std::string::npos || m.find(phrase) == std::string::npos)
      return ::testing::AssertionFailure() << "message lacks \"" << label << "\" or \"" << phrase << "\": " << m;
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "accepted; expected an error saying \"" << phrase << "\"";
}

}  // namespace vkamp::test
