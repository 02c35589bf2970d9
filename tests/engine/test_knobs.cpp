// The environment-knob table (vkamp/knobs.hpp): every name listed once,
// readers refused a name the table lacks, and each typed reader's rule for
// set, empty and unset variables.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>

#include "vkamp/config_error.hpp"
#include "vkamp/kernel_paths.hpp"
#include "vkamp/knobs.hpp"
#include "vkamp/platform.hpp"

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
    Env e("VKAMP_FASHION_MNIST_DIR", "/data");
    EXPECT_EQ(env_text("VKAMP_FASHION_MNIST_DIR").value_or(""), "/data");
  }
  if (vkamp::platform::running_on_windows())
    GTEST_SKIP() << "Windows has no empty environment variable: setting one to \"\" removes it";
  Env e("VKAMP_FASHION_MNIST_DIR", "");
  EXPECT_TRUE(env_knob("VKAMP_FASHION_MNIST_DIR").has_value());
  EXPECT_FALSE(env_text("VKAMP_FASHION_MNIST_DIR").has_value());
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

// The environment's kernel paths (kernel_paths_from_env): a two-way
// variable names one path, any other value the other; unset or empty leaves
// the field to the device; a switch is off only at 0; values with a form
// are checked here, once.
TEST(Knobs, KernelPathsFromTheEnvironment) {
  {
    Env e("VKAMP_ROW_KERNEL", nullptr);
    EXPECT_FALSE(kernel_paths_from_env().row_per_thread.has_value());
  }
  {
    Env e("VKAMP_ROW_KERNEL", "");
    EXPECT_FALSE(kernel_paths_from_env().row_per_thread.has_value()) << "empty is unset";
  }
  {
    Env e("VKAMP_ROW_KERNEL", "thread");
    EXPECT_EQ(kernel_paths_from_env().row_per_thread, true);
  }
  {
    Env e("VKAMP_ROW_KERNEL", "group");
    EXPECT_EQ(kernel_paths_from_env().row_per_thread, false);
  }
  {
    Env e("VKAMP_FUSE_ACT_GRAD", "0");
    EXPECT_EQ(kernel_paths_from_env().fuse_act_grad, false);
  }
  {
    Env e("VKAMP_COOPMAT", "khr");
    const KernelPaths p = kernel_paths_from_env();
    EXPECT_EQ(p.gemm_mma, GemmMma::coopmat);
    EXPECT_EQ(p.coopmat_api, CoopmatApi::khr);
  }
  {
    Env e("VKAMP_COOPMAT", "auto");
    EXPECT_FALSE(kernel_paths_from_env().gemm_mma.has_value());
  }
  {
    Env e("VKAMP_GEMM_BLOCK", "4x8");
    EXPECT_EQ(kernel_paths_from_env().gemm_block, KernelPaths::Dims(4, 8));
  }
  for (const char* bad : {"16x8abc", "32x8", "0x4", "8", "x"}) {
    Env e("VKAMP_GEMM_BLOCK", bad);
    EXPECT_THROW(kernel_paths_from_env(), ConfigError) << bad;
  }
  Env e("VKAMP_ATTENTION", "flash");
  EXPECT_THROW(kernel_paths_from_env(), ConfigError);
}

// vkamp-bench --paths: the variables' names (VKAMP_ optional) with the
// environment's rules; anything else is refused naming the known names.
TEST(Knobs, KernelPathsFromSettings) {
  const KernelPaths p = kernel_paths_from_settings("GEMM_TILED=0,VKAMP_GEMM_LOADS=storage,COOPMAT=emulate");
  EXPECT_EQ(p.gemm_tiled, false);
  EXPECT_EQ(p.gemm_texel_loads, false);
  EXPECT_EQ(p.gemm_mma, GemmMma::emulated);
  EXPECT_EQ(kernel_paths_from_settings("default"), KernelPaths{});
  for (const char* bad : {"GEMM_TILE=0", "GEMM_TILED", "COOPMAT=2", "GEMM_BLOCK=32x8", "PATH=x"})
    EXPECT_THROW(kernel_paths_from_settings(bad), ConfigError) << bad;
}

// Code's choices win over the environment's, field by field.
TEST(Knobs, KernelPathsInCodeWinOverTheEnvironment) {
  KernelPaths code;
  code.attention = AttentionPath::fused;
  KernelPaths env;
  env.attention = AttentionPath::materialized;
  env.gemm_tiled = false;
  const KernelPaths p = code.or_else(env);
  EXPECT_EQ(p.attention, AttentionPath::fused);
  EXPECT_EQ(p.gemm_tiled, false);
  EXPECT_FALSE(p.row_per_thread.has_value()) << "a field neither sets stays the device's";
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
