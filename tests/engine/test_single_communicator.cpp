// The world of one (communicator_single.cpp), which a VKAMP_WITH_MPI=OFF
// build links instead of MPI: every collective is the identity, so the
// trainer's data-parallel code runs unchanged as one process.
#include <gtest/gtest.h>

#include <vector>

#include "vkamp/dist/communicator.hpp"

namespace vkamp::dist {
namespace {

TEST(SingleCommunicator, IsAWorldOfOneWhoseCollectivesReturnTheirInput) {
  Communicator& w = Communicator::world();
  EXPECT_FALSE(built_with_mpi());
  EXPECT_EQ(w.rank(), 0);
  EXPECT_EQ(w.size(), 1);
  EXPECT_FALSE(w.distributed());
  EXPECT_EQ(w.prefix(), "");
  std::vector<float> v = {1.5f, -2.0f, 3.25f};
  w.sum(v.data(), v.size());
  EXPECT_EQ(v, (std::vector<float>{1.5f, -2.0f, 3.25f}));
  EXPECT_EQ(w.min(7), 7u);
  EXPECT_EQ(w.max(9), 9u);
  EXPECT_TRUE(w.any(true));
  EXPECT_FALSE(w.any(false));
}

TEST(SingleCommunicator, ReportsItsOwnInputFailureAsTheFirst) {
  Communicator& w = Communicator::world();
  EXPECT_EQ(w.agree_ready(true), -1);
  EXPECT_TRUE(w.ready_agreed());
  EXPECT_EQ(w.agree_ready(false), 0);
  EXPECT_EQ(w.first_failed(), 0);
}

}  // namespace
}  // namespace vkamp::dist
