#include "vkamp/kernel_paths.hpp"

#include <functional>
#include <map>

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

// The variables a KernelPaths is read from, in describe()'s order.
constexpr const char* kPathVariables[] = {
    "VKAMP_COOPMAT", "VKAMP_MMA_LANES", "VKAMP_GEMM_TUNE", "VKAMP_GEMM_KERNEL", "VKAMP_GEMM_TILED",
    "VKAMP_GEMM_BLOCK", "VKAMP_GEMM_SG", "VKAMP_GEMM_LOADS", "VKAMP_ROW_KERNEL", "VKAMP_COLUMN_SUM",
    "VKAMP_EMBEDDING_GRAD", "VKAMP_POOL_GRAD", "VKAMP_ATTENTION", "VKAMP_ATTENTION_TILES", "VKAMP_FUSE_EPILOGUE",
    "VKAMP_FUSE_ACT_GRAD", "VKAMP_FUSE_RESIDUAL_GRAD"};

KernelPaths kernel_paths_from(const Lookup& get);

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
    bool known = false;
    for (const char* v : kPathVariables) known = known || name == v;
    if (eq == std::string::npos || !known) {
      std::string names;
      for (const char* v : kPathVariables) names += (names.empty() ? "" : ", ") + std::string(v + 6);
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

std::string describe(const KernelPaths& p) {
  std::string s;
  auto add = [&](const char* name, const std::string& value) { s += (s.empty() ? "" : " ") + std::string(name) + "=" + value; };
  auto bit = [](bool b) { return std::string(b ? "1" : "0"); };
  auto dims = [](const KernelPaths::Dims& d) { return std::to_string(d.first) + "x" + std::to_string(d.second); };
  if (p.gemm_mma) {
    const bool khr = p.coopmat_api == CoopmatApi::khr;
    add("VKAMP_COOPMAT", *p.gemm_mma == GemmMma::off ? "0" : *p.gemm_mma == GemmMma::emulated ? "emulate" : khr ? "khr" : "1");
  }
  if (p.mma_lanes) add("VKAMP_MMA_LANES", std::to_string(*p.mma_lanes));
  if (p.gemm_tune) add("VKAMP_GEMM_TUNE", *p.gemm_tune == GemmTuneMode::off ? "off" : *p.gemm_tune == GemmTuneMode::on ? "on" : "cached");
  if (p.gemm_kernel) add("VKAMP_GEMM_KERNEL", *p.gemm_kernel);
  if (p.gemm_tiled) add("VKAMP_GEMM_TILED", bit(*p.gemm_tiled));
  if (p.gemm_block) add("VKAMP_GEMM_BLOCK", dims(*p.gemm_block));
  if (p.gemm_subgroup_a) add("VKAMP_GEMM_SG", bit(*p.gemm_subgroup_a));
  if (p.gemm_texel_loads) add("VKAMP_GEMM_LOADS", *p.gemm_texel_loads ? "texel" : "storage");
  if (p.row_per_thread) add("VKAMP_ROW_KERNEL", *p.row_per_thread ? "thread" : "group");
  if (p.column_sum_gpu) add("VKAMP_COLUMN_SUM", *p.column_sum_gpu ? "gpu" : "cpu");
  if (p.embedding_scatter) add("VKAMP_EMBEDDING_GRAD", *p.embedding_scatter ? "scatter" : "scan");
  if (p.pool_grad_window) add("VKAMP_POOL_GRAD", *p.pool_grad_window ? "window" : "gather");
  if (p.attention) add("VKAMP_ATTENTION", attention_path_name(*p.attention));
  if (p.attention_tiles) add("VKAMP_ATTENTION_TILES", *p.attention_tiles);
  if (p.fuse_epilogue) add("VKAMP_FUSE_EPILOGUE", bit(*p.fuse_epilogue));
  if (p.fuse_act_grad) add("VKAMP_FUSE_ACT_GRAD", bit(*p.fuse_act_grad));
  if (p.fuse_residual_grad) add("VKAMP_FUSE_RESIDUAL_GRAD", bit(*p.fuse_residual_grad));
  return s;
}

}  // namespace vkamp
