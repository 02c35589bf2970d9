// The process-wide test Context (validation layer always on) and the base
// fixture that fails any test during which the layer printed a message.
#pragma once
#include <gtest/gtest.h>

#include "support/cases.hpp"
#include "vkamp/context.hpp"
#include "vkamp/instance.hpp"

namespace vkamp::test {

// Created by the test main, on $VKAMP_DEVICE, with validation on unless
// VKAMP_TEST_VALIDATION=0 (a test's own Context takes ctx().validation()). Throws
// vkamp::Error, saying why, where no usable device was found. Inside a
// UsePaths scope, the context with those kernel paths instead.
Context& ctx();

// While it lives, ctx() is a context on the same device whose options take
// `paths` (the fields left unset as the current ctx() has them): made on
// first use and kept to the end of the process, so a test over several
// paths pays for each context once. Throws vkamp::Error where the device
// cannot run them (tensor cores on a device without).
class UsePaths {
 public:
  explicit UsePaths(const KernelPaths& paths);
  ~UsePaths();
  UsePaths(const UsePaths&) = delete;
  UsePaths& operator=(const UsePaths&) = delete;

 private:
  Context* previous_;
};

// Why the test main found no usable device; empty when it did.
const std::string& no_device_reason();
// Why every GPU test skips on this device (VKAMP_COOPMAT=1 without tensor
// cores); empty when they run.
const std::string& skip_all_reason();

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!no_device_reason().empty()) FAIL() << no_device_reason();
    if (!skip_all_reason().empty()) GTEST_SKIP() << skip_all_reason();
    messages_at_start_ = validation_message_count();
  }
  void TearDown() override {
    EXPECT_EQ(validation_message_count(), messages_at_start_)
        << "the Khronos validation layer reported messages during this test (see stderr)";
  }

 private:
  uint64_t messages_at_start_ = 0;
};

template <class Param>
class GpuTestP : public GpuTest, public ::testing::WithParamInterface<Param> {};

// A shader test over rows x cols matrices in one format: rows is the test's
// size, and for_each_cols runs `check(cols)` at every awkward column count.
class MatrixShaderTest : public GpuTestP<FormatSize> {
 protected:
  Format fmt() const { return std::get<0>(GetParam()); }
  uint32_t rows() const { return std::get<1>(GetParam()); }

  template <class Check>
  void for_each_cols(Check check) {
    for (uint32_t cols : kSizes) {
      SCOPED_TRACE(::testing::Message() << rows() << " x " << cols);
      check(cols);
    }
  }
};

}  // namespace vkamp::test
