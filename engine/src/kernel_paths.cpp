#include "vkamp/kernel_paths.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <vector>

#include "vkamp/config_error.hpp"
#include "vkamp/knobs.hpp"

namespace vkamp {
namespace {

// A variable's value, or nullopt while it is unset or empty.
using Lookup = std::function<std::optional<std::string>(const char*)>;

// A two-way choice: while set, whether it names `value` (any other value
// takes the other path).
std::optional<bool> picks(const Lookup& get, const char* name, const char* value) {
  const std::optional<std::string> v = get(name);
  if (!v) return std::nullopt;
  return *v == value;
}

std::optional<bool> switch_of(const Lookup& get, const char* name) {
  const std::optional<std::string> v = get(name);
  if (!v) return std::nullopt;
  return *v != "0";
}

std::optional<std::string> choice_of(const Lookup& get, const char* name) {
  const std::optional<std::string> v = get(name);
  if (!v) return std::nullopt;
  return knob_choice(name, *v);
}

KernelPaths kernel_paths_from(const Lookup& get);

// The variables a KernelPaths is read from: the ones kernel_paths_from asks for.
std::vector<std::string> path_variables() {
  std::vector<std::string> names;
  kernel_paths_from([&](const char* name) -> std::optional<std::string> {
    names.emplace_back(name);
    return std::nullopt;
  });
  return names;
}

}  // namespace

const char* attention_path_name(AttentionPath p) {
  switch (p) {
    case AttentionPath::fused: return "fused";
    case AttentionPath::mma: return "mma";
    case AttentionPath::materialized: return "materialized";
  }
  return "?";
}

KernelPaths KernelPaths::or_else(const KernelPaths& f) const {
  KernelPaths p = *this;
  auto fill = [](auto& mine, const auto& theirs) {
    if (!mine) mine = theirs;
  };
  fill(p.gemm_mma, f.gemm_mma);
  fill(p.coopmat_api, f.coopmat_api);
  fill(p.mma_lanes, f.mma_lanes);
  fill(p.gemm_tune, f.gemm_tune);
  fill(p.gemm_kernel, f.gemm_kernel);
  fill(p.gemm_tiled, f.gemm_tiled);
  fill(p.gemm_block, f.gemm_block);
  fill(p.gemm_subgroup_a, f.gemm_subgroup_a);
  fill(p.gemm_texel_loads, f.gemm_texel_loads);
  fill(p.row_per_thread, f.row_per_thread);
  fill(p.column_sum_gpu, f.column_sum_gpu);
  fill(p.embedding_scatter, f.embedding_scatter);
  fill(p.pool_grad_window, f.pool_grad_window);
  fill(p.attention, f.attention);
  fill(p.attention_tiles, f.attention_tiles);
  fill(p.fuse_epilogue, f.fuse_epilogue);
  fill(p.fuse_act_grad, f.fuse_act_grad);
  fill(p.fuse_residual_grad, f.fuse_residual_grad);
  return p;
}

KernelPaths kernel_paths_from_env() { return kernel_paths_from(env_text); }

KernelPaths kernel_paths_from_settings(const std::string& text) {
  std::map<std::string, std::string> set;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    if (item.empty() || item == "default") continue;
    const size_t eq = item.find('=');
    std::string name = item.substr(0, eq);
    if (name.rfind("VKAMP_", 0) != 0) name = "VKAMP_" + name;
    const std::vector<std::string> variables = path_variables();
    if (eq == std::string::npos || std::find(variables.begin(), variables.end(), name) == variables.end()) {
      std::string names;
      for (const std::string& v : variables) names += (names.empty() ? "" : ", ") + v.substr(6);
      throw ConfigError("a kernel path is NAME=value pairs, comma-separated, with NAME one of " + names +
                        " (or default), not \"" + item + "\"");
    }
    set[name] = item.substr(eq + 1);
  }
  return kernel_paths_from([&](const char* name) -> std::optional<std::string> {
    const auto it = set.find(name);
    if (it == set.end() || it->second.empty()) return std::nullopt;
    return it->second;
  });
}

namespace {

KernelPaths kernel_paths_from(const Lookup& get) {
  KernelPaths p;
  if (const auto v = choice_of(get, "VKAMP_COOPMAT"); v && *v != "auto") {
    p.gemm_mma = *v == "0" ? GemmMma::off : *v == "emulate" ? GemmMma::emulated : GemmMma::coopmat;
    if (*v == "khr") p.coopmat_api = CoopmatApi::khr;
  }
  if (const auto v = choice_of(get, "VKAMP_MMA_LANES")) p.mma_lanes = uint32_t(std::stoul(*v));
  if (const auto v = choice_of(get, "VKAMP_GEMM_TUNE"))
    p.gemm_tune = *v == "off" ? GemmTuneMode::off : *v == "on" ? GemmTuneMode::on : GemmTuneMode::cached;
  p.gemm_kernel = get("VKAMP_GEMM_KERNEL");
  p.gemm_tiled = picks(get, "VKAMP_GEMM_TILED", "1");
  if (const auto v = get("VKAMP_GEMM_BLOCK")) {
    const auto dims = parse_dims(*v);
    if (!dims || dims->first > 16 || dims->second > 16)
      throw ConfigError("VKAMP_GEMM_BLOCK is RxC, each 1 to 16 (e.g. 16x8), not \"" + *v + "\"");
    p.gemm_block = *dims;
  }
  p.gemm_subgroup_a = switch_of(get, "VKAMP_GEMM_SG");
  p.gemm_texel_loads = picks(get, "VKAMP_GEMM_LOADS", "texel");
  p.row_per_thread = picks(get, "VKAMP_ROW_KERNEL", "thread");
  p.column_sum_gpu = picks(get, "VKAMP_COLUMN_SUM", "gpu");
  p.embedding_scatter = picks(get, "VKAMP_EMBEDDING_GRAD", "scatter");
  p.pool_grad_window = picks(get, "VKAMP_POOL_GRAD", "window");
  if (const auto v = choice_of(get, "VKAMP_ATTENTION"))
    p.attention = *v == "fused" ? AttentionPath::fused : *v == "mma" ? AttentionPath::mma : AttentionPath::materialized;
  p.attention_tiles = get("VKAMP_ATTENTION_TILES");
  p.fuse_epilogue = switch_of(get, "VKAMP_FUSE_EPILOGUE");
  p.fuse_act_grad = switch_of(get, "VKAMP_FUSE_ACT_GRAD");
  p.fuse_residual_grad = switch_of(get, "VKAMP_FUSE_RESIDUAL_GRAD");
  return p;
}

}  // namespace

}  // namespace vkamp
