// The check the reader tests make of a bad input: the call throws an `Error`
// (io::FormatError, data::DataError) whose message names `label` (the
// file, with its line or byte where the reader knows one) and says `phrase`.
#pragma once
#include <gtest/gtest.h>

#include <string>

namespace vkamp::test {

template <class Error, class Call>
::testing::AssertionResult rejected_with(Call&& call, const std::string& label, const std::string& phrase) {
  try {
    call();
  } catch (const Error& e) {
    std::string m = e.what();
    if (m.find(label) == std::string::npos || m.find(phrase) == std::string::npos)
      return ::testing::AssertionFailure() << "message lacks \"" << label << "\" or \"" << phrase << "\": " << m;
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "accepted; expected an error saying \"" << phrase << "\"";
}

}  // namespace vkamp::test
