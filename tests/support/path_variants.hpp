// Path variants: a test binary run again on kernel paths and device
// settings the default device does not take (the shared-memory GEMM on a
// CPU driver, fp16 storage on a device with fp16 math, the tensor-core
// GEMM's emulation, ...), each on a gtest filter. The set is a list in C++
// (tests/shaders/path_variants.cpp for test_shaders); GroupGTestCases.cmake
// asks the binary for it (--vkamp_list_variants) and makes one ctest entry
// of each, `test_shaders --vkamp_variant=NAME`, whose test main then makes
// its context with the variant's options and runs its filter. A filter that
// matches no test fails the entry (the test main), so a renamed test
// cannot silently empty a variant.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vkamp/kernel_paths.hpp"

namespace vkamp::test {

struct PathVariant {
  std::string name;    // the ctest entry is <label>_<name>
  std::string filter;  // the cases it runs (--gtest_filter's syntax)
  KernelPaths paths;
  bool fp16_storage_only = false;
  std::optional<bool> inf_nan_preserve;
  // Variables for the driver or the validation layer, VAR=value: the test
  // main sets them before it makes its context, and ctest sets them too,
  // since under Wine only the host's environment reaches them.
  std::vector<std::string> env;
  int cost = 0;  // ctest's COST: a larger one starts earlier
  // A second ctest label beside the binary's (`subgroups`); empty: none.
  std::string label;
  // The subgroup size lavapipe must report under `env` (its
  // LP_NATIVE_VECTOR_WIDTH); 0: any. On lavapipe at another size every test
  // fails; on any other driver, which keeps its own size, the variant skips,
  // saying so (the test main).
  uint32_t lavapipe_lanes = 0;
};

// Adds variants to the binary's list (at static initialization).
bool add_path_variants(std::vector<PathVariant> variants);
const std::vector<PathVariant>& path_variants();
// The variant named, or nullptr.
const PathVariant* find_path_variant(const std::string& name);

}  // namespace vkamp::test
