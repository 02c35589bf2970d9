// The process-wide test Context (validation layer always on) and the base
// fixture that fails any test during which the layer printed a message.
#pragma once
#include <gtest/gtest.h>

#include "vkamp/context.hpp"
#include "vkamp/instance.hpp"

namespace vkamp::test {

// Created by the test main, on $VKAMP_DEVICE, with validation on.
Context& ctx();

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override { messages_at_start_ = validation_message_count(); }
  void TearDown() override {
    EXPECT_EQ(validation_message_count(), messages_at_start_)
        << "the Khronos validation layer reported messages during this test (see stderr)";
  }

 private:
  uint64_t messages_at_start_ = 0;
};

template <class Param>
class GpuTestP : public GpuTest, public ::testing::WithParamInterface<Param> {};

}  // namespace vkamp::test
