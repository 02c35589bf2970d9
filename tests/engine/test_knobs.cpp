// The environment-knob table (vkamp/knobs.hpp): every name listed once,
// readers refused a name the table lacks, and each typed reader's rule for
// set, empty and unset variables.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>

#include "vkamp/config_error.hpp"
#include "vkamp/knobs.hpp"

namespace vkamp {
namespace {

using Env = ScopedEnv;

TEST(Knobs, EveryNameOnceWithItsValuesDefaultAndPurpose) {
  std::set<std::string> names;
  for (const EnvKnob& k : env_knobs()) {
    EXPECT_EQ(std::string(k.name).rfind("VKAMP_", 0), 0u) << k.name;
    EXPECT_TRUE(names.insert(k.name).second) << k.name << " is listed twice";
    EXPECT_FALSE(k.values_text().empty()) << k.name;
    EXPECT_NE(*k.fallback, '\0') << k.name;
    EXPECT_NE(*k.purpose, '\0') << k.name;
  }
  for (const char* read : {"VKAMP_DEVICE", "VKAMP_COOPMAT", "VKAMP_GEMM_TILED", "VKAMP_FUSE_EPILOGUE",
                           "VKAMP_FASHION_MNIST_DIR"})
    EXPECT_FALSE(env_knob_row(read).test_only()) << read;
  EXPECT_TRUE(env_knob_row("VKAMP_TEST_SEED").test_only());
}

TEST(Knobs, DimsAreTwoWholeNumbersJoinedByX) {
  EXPECT_EQ(parse_dims("64x32"), (std::pair<uint32_t, uint32_t>{64, 32}));
  EXPECT_EQ(parse_dims("1x1"), (std::pair<uint32_t, uint32_t>{1, 1}));
  for (const char* bad : {"", "x", "64", "64x", "x32", "0x4", "4x0", "64x32x", "64x32 ", "64*32", "gpu"})
    EXPECT_FALSE(parse_dims(bad).has_value()) << "'" << bad << "'";
}

TEST(Knobs, AnUnlistedNameIsAProgrammingError) {
  EXPECT_THROW(env_knob("VKAMP_NOT_A_KNOB"), std::logic_error);
  EXPECT_THROW(env_switch("VKAMP_NOT_A_KNOB", true), std::logic_error);
}

TEST(Knobs, TextTreatsEmptyAsUnset) {
  {
    Env e("VKAMP_FASHION_MNIST_DIR", "");
    EXPECT_TRUE(env_knob("VKAMP_FASHION_MNIST_DIR").has_value());
    EXPECT_FALSE(env_text("VKAMP_FASHION_MNIST_DIR").has_value());
  }
  Env e("VKAMP_FASHION_MNIST_DIR", "/data");
  EXPECT_EQ(env_text("VKAMP_FASHION_MNIST_DIR").value_or(""), "/data");
}

TEST(Knobs, SwitchIsOffOnlyForZero) {
  const char* name = "VKAMP_FP16_STORAGE_ONLY";
  {
    Env e(name, nullptr);
    EXPECT_FALSE(env_switch(name, false));
    EXPECT_TRUE(env_switch(name, true));
  }
  {
    Env e(name, "");
    EXPECT_TRUE(env_switch(name, true));
  }
  {
    Env e(name, "0");
    EXPECT_FALSE(env_switch(name, true));
  }
  Env e(name, "yes");
  EXPECT_TRUE(env_switch(name, false));
}

TEST(Knobs, PicksNamesOnePathAnyOtherValueTheOther) {
  const char* name = "VKAMP_ROW_KERNEL";
  {
    Env e(name, nullptr);
    EXPECT_TRUE(env_picks(name, "thread", true));
  }
  {
    Env e(name, "thread");
    EXPECT_TRUE(env_picks(name, "thread", false));
  }
  Env e(name, "group");
  EXPECT_FALSE(env_picks(name, "thread", true));
}

TEST(Knobs, ChoiceRejectsAnUnknownValueNamingTheVariableAndItsValues) {
  const char* name = "VKAMP_COOPMAT";
  {
    Env e(name, nullptr);
    EXPECT_EQ(env_choice(name), "auto");
  }
  {
    Env e(name, "emulate");
    EXPECT_EQ(env_choice(name), "emulate");
  }
  Env e(name, "tensor");
  try {
    env_choice(name);
    FAIL() << "no error for VKAMP_COOPMAT=tensor";
  } catch (const vkamp::ConfigError& err) {
    EXPECT_STREQ(err.what(), "VKAMP_COOPMAT is auto, 0, 1, emulate or khr, not \"tensor\"");
  }
}

}  // namespace
}  // namespace vkamp
