#include "vkamp/ops/gemm_kernel.hpp"

#include <cstdio>
#include <stdexcept>

#include "vkamp/ops/gemm.hpp"

namespace vkamp::ops {
namespace {

// The fields of a class or a class pattern: transposes, then m, n, k buckets.
std::vector<std::string_view> class_fields(std::string_view cls) {
  std::vector<std::string_view> f;
  const size_t colon = cls.find(':');
  if (colon == std::string_view::npos) return {cls};
  f.push_back(cls.substr(0, colon));
  for (size_t p = colon + 1;;) {
    const size_t dot = cls.find('.', p);
    f.push_back(cls.substr(p, dot == std::string_view::npos ? std::string_view::npos : dot - p));
    if (dot == std::string_view::npos) break;
    p = dot + 1;
  }
  return f;
}

char bucket(uint64_t v) { return v <= 128 ? 'S' : v <= 512 ? 'M' : v <= 2048 ? 'L' : 'X'; }

}  // namespace

std::string GemmKernel::name() const {
  if (!mma) return "shader";
  return "mma-w" + std::to_string(shape.warps) + "-f" + std::to_string(shape.frags_m) + "x" +
         std::to_string(shape.frags_n) + "-k" + std::to_string(shape.bk) + (shape.double_buffer ? "-db" : "-sb");
}

std::optional<GemmKernel> GemmKernel::parse(std::string_view name) {
  if (name == "shader") return GemmKernel{};
  unsigned w = 0, fm = 0, fn = 0, bk = 0;
  char buf[3] = {};
  int used = 0;
  const std::string text(name);
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
  return s;
}

bool gemm_class_valid(std::string_view cls) {
  const auto f = class_fields(cls);
  if (f.size() != 4 || f[0].size() != 2) return false;
  for (char c : f[0])
    if (c != 'n' && c != 't') return false;
  for (size_t i = 1; i < 4; ++i)
    if (f[i].size() != 1 || std::string_view("SMLX").find(f[i][0]) == std::string_view::npos) return false;
  return true;
}

Gemm gemm_class_example(const std::string& cls) {
  if (!gemm_class_valid(cls)) throw std::invalid_argument("not a GEMM class: " + cls);
  auto size = [&](size_t at) { return uint32_t(64) << (2 * std::string_view("SMLX").find(cls[at])); };
  return {.m = size(3), .n = size(5), .k = size(7), .trans_a = cls[0] == 't', .trans_b = cls[1] == 't'};
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
