#include "vkamp/ops/gemm_kernel.hpp"

#include <cstdio>
#include <stdexcept>

#include "vkamp/ops/gemm.hpp"
#include "vkamp/quant/ggml_type.hpp"

namespace vkamp::ops {
namespace {

// The fields of a class or a class pattern: transposes, the m, n, k
// buckets, and a B in blocks' type ("nt:S.L.L:q4_k": 5 fields).
std::vector<std::string_view> class_fields(std::string_view cls) {
  std::vector<std::string_view> f;
  for (size_t p = 0;;) {
    const size_t end = cls.find_first_of(f.size() == 0 || f.size() == 3 ? ":" : ".", p);
    f.push_back(cls.substr(p, end == std::string_view::npos ? std::string_view::npos : end - p));
    if (end == std::string_view::npos) return f;
    p = end + 1;
  }
}

// A quantized ggml type's name, as a class's fifth field holds it.
std::optional<quant::GgmlType> class_blocks(std::string_view name) {
  const auto t = quant::ggml_type_from_name(name);
  if (!t || !quant::is_quantized(*t) || quant::ggml_type_info(*t).name != name) return std::nullopt;
  return t;
}

char bucket(uint64_t v) { return v <= 128 ? 'S' : v <= 512 ? 'M' : v <= 2048 ? 'L' : 'X'; }

}  // namespace

std::string GemmKernel::name() const {
  if (!mma) {
    if (!tiled) return "shader";
    if (*tiled) return "shader-tiled";
    if (!block) return "shader-direct";
    return "shader-direct-" + std::to_string(block->first) + "x" + std::to_string(block->second);
  }
  return "mma-w" + std::to_string(shape.warps) + "-f" + std::to_string(shape.frags_m) + "x" +
         std::to_string(shape.frags_n) + "-k" + std::to_string(shape.bk) + (shape.double_buffer ? "-db" : "-sb");
}

std::optional<GemmKernel> GemmKernel::parse(std::string_view name) {
  if (name == "shader") return GemmKernel{};
  if (name == "shader-tiled") return GemmKernel{.tiled = true};
  if (name == "shader-direct") return GemmKernel{.tiled = false};
  unsigned w = 0, fm = 0, fn = 0, bk = 0;
  char buf[3] = {};
  int used = 0;
  const std::string text(name);
  if (name.rfind("shader-direct-", 0) == 0) {
    if (std::sscanf(text.c_str(), "shader-direct-%ux%u%n", &fm, &fn, &used) != 2 || size_t(used) != text.size() ||
        fm < 1 || fm > 16 || fn < 1 || fn > 16)
      return std::nullopt;
    const GemmKernel k{.tiled = false, .block = std::pair{uint32_t(fm), uint32_t(fn)}};
    if (k.name() != name) return std::nullopt;  // no leading zeros or other spellings
    return k;
  }
  if (std::sscanf(text.c_str(), "mma-w%u-f%ux%u-k%u-%2[dbs]%n", &w, &fm, &fn, &bk, buf, &used) != 5 ||
      size_t(used) != text.size())
    return std::nullopt;
  const std::string buffering = buf;
  GemmKernel k{.mma = true, .shape = {w, fm, fn, bk, buffering == "db"}};
  // Only the family's members: the shader is specialized for these.
  const bool frags_ok = (fm == 1 && fn == 2) || (fm == 2 && fn == 2) || (fm == 2 && fn == 4) || (fm == 4 && fn == 2);
  if ((w != 4 && w != 8) || !frags_ok || (bk != 32 && bk != 64) || (buffering != "db" && buffering != "sb"))
    return std::nullopt;
  if (k.name() != name) return std::nullopt;  // no leading zeros or other spellings
  return k;
}

bool gemm_candidate_fits(const GemmKernel& k, const DeviceInfo& info, uint32_t lanes) {
  if (!k.mma) return true;
  return k.shape.warps * lanes <= info.max_workgroup_invocations && k.shape.shared_bytes() <= info.max_shared_memory;
}

std::vector<GemmKernel> gemm_candidates(const DeviceInfo& info, uint32_t lanes) {
  std::vector<GemmKernel> out{GemmKernel{}};
  const uint32_t frags[4][2] = {{1, 2}, {2, 2}, {2, 4}, {4, 2}};
  for (uint32_t w : {4u, 8u})
    for (const auto& f : frags)
      for (uint32_t bk : {32u, 64u})
        for (bool db : {false, true}) {
          GemmKernel k{.mma = true, .shape = {w, f[0], f[1], bk, db}};
          if (gemm_candidate_fits(k, info, lanes)) out.push_back(k);
        }
  return out;
}

std::vector<GemmKernel> gemm_quant_candidates(const DeviceInfo& info) {
  std::vector<GemmKernel> out;
  for (const auto& b : {std::pair{16u, 8u}, {8u, 16u}, {8u, 8u}, {4u, 4u}})
    out.push_back({.tiled = false, .block = b});
  const GemmKernel tiled{.tiled = true};
  if (info.type == VK_PHYSICAL_DEVICE_TYPE_CPU) out.push_back(tiled);
  else out.insert(out.begin(), tiled);
  return out;
}

std::string gemm_class(const Gemm& g) {
  std::string s;
  s += g.trans_a ? 't' : 'n';
  s += g.trans_b ? 't' : 'n';
  s += ':';
  s += bucket(uint64_t(g.plan_rows ? g.plan_rows : g.m) * std::max(g.batch, 1u));
  s += '.';
  s += bucket(g.n);
  s += '.';
  s += bucket(g.k);
  if (g.b_blocks) s += std::string(":") + quant::ggml_type_info(*g.b_blocks).name;
  return s;
}

bool gemm_class_valid(std::string_view cls) {
  const auto f = class_fields(cls);
  if ((f.size() != 4 && !(f.size() == 5 && class_blocks(f[4]))) || f[0].size() != 2) return false;
  for (char c : f[0])
    if (c != 'n' && c != 't') return false;
  for (size_t i = 1; i < 4; ++i)
    if (f[i].size() != 1 || std::string_view("SMLX").find(f[i][0]) == std::string_view::npos) return false;
  return true;
}

Gemm gemm_class_example(const std::string& cls) {
  if (!gemm_class_valid(cls)) throw std::invalid_argument("not a GEMM class: " + cls);
  auto size = [&](size_t at) { return uint32_t(64) << (2 * std::string_view("SMLX").find(cls[at])); };
  const auto f = class_fields(cls);
  return {.m = size(3), .n = size(5), .k = size(7), .trans_a = cls[0] == 't', .trans_b = cls[1] == 't',
          .b_blocks = f.size() == 5 ? class_blocks(f[4]) : std::nullopt};
}

bool gemm_class_matches(std::string_view pattern, std::string_view cls) {
  if (pattern == "*") return true;
  const auto p = class_fields(pattern), c = class_fields(cls);
  if (p.size() != c.size()) return false;
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != "*" && p[i] != c[i]) return false;
  return true;
}

}  // namespace vkamp::ops
