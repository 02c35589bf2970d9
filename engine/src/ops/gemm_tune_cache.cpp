// The GEMM tuner's data: the cache file's format and the compiled-in
// defaults (gemm_defaults.txt, embedded at build time as gemm_defaults.inc).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "vkamp/ops/gemm_tuner.hpp"
#include "vkamp/platform.hpp"

#ifndef VKAMP_VERSION
#error "VKAMP_VERSION: engine/CMakeLists.txt defines it for this file"
#endif

namespace vkamp::ops {
namespace {

constexpr const char* kHeader = "vkamp-gemm-tune 1";

const char* kDefaults =
#include "gemm_defaults.inc"
    ;

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

std::string key_line(const GemmTuneKey& k) {
  return "key vendor=" + hex(k.vendor) + " device=" + hex(k.device) + " driver=" + hex(k.driver) +
         " vkamp=" + k.vkamp;
}

// A class of products whose B is in ggml blocks ("nt:S.L.L:q4_k"): no
// tensor-core kernel reads blocks, so its row's best-mma is "-".
bool reads_blocks(const std::string& cls) { return std::count(cls.begin(), cls.end(), ':') == 2; }
constexpr const char* kNoMma = "-";

bool parse_ms(const std::string& text, double& ms) {
  char* end = nullptr;
  ms = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0' && std::isfinite(ms) && ms >= 0;
}

}  // namespace

GemmTuneKey gemm_tune_key(const DeviceInfo& info) {
  return {info.vendor_id, info.device_id, info.driver_version, VKAMP_VERSION};
}

std::string gemm_tune_path(const DeviceInfo& info) {
  const std::string dir = platform::user_cache_dir();
  if (dir.empty()) return "";
  char name[64];
  std::snprintf(name, sizeof name, "gemm-tune-%04x-%04x.txt", info.vendor_id, info.device_id);
  return dir + "/" + name;
}

std::string format_tune_file(const GemmTuneKey& key, const GemmTuneTable& table) {
  std::ostringstream out;
  out << kHeader << "\n" << key_line(key) << "\n";
  out << "# class winner ms best-mma ms (vkamp-bench gemm --tune, vkamp-bench quant --tune; ms per product as "
         "timed; best-mma - where B is in ggml blocks)\n";
  for (const auto& [cls, c] : table)
    out << cls << " " << c.winner.name() << " " << c.winner_ms << " "
        << (reads_blocks(cls) ? std::string(kNoMma) : c.best_mma.name()) << " " << c.best_mma_ms << "\n";
  return out.str();
}

std::optional<GemmTuneTable> parse_tune_file(const std::string& text, const GemmTuneKey& key,
                                             const DeviceInfo& info, uint32_t lanes, std::string& why) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kHeader) {
    why = "corrupt: the first line is not \"" + std::string(kHeader) + "\"";
    return std::nullopt;
  }
  if (!std::getline(in, line) || line.rfind("key ", 0) != 0) {
    why = "corrupt: no key line";
    return std::nullopt;
  }
  if (line != key_line(key)) {
    why = "foreign: timed for \"" + line.substr(4) + "\", this is \"" + key_line(key).substr(4) + "\"";
    return std::nullopt;
  }
  GemmTuneTable table;
  for (int no = 3; std::getline(in, line); ++no) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    std::string cls, winner, wms, best, bms, extra;
    row >> cls >> winner >> wms >> best >> bms;
    const auto w = GemmKernel::parse(winner);
    const bool blocks = gemm_class_valid(cls) && reads_blocks(cls);
    const auto b = blocks ? (best == kNoMma ? std::optional(GemmKernel{}) : std::nullopt) : GemmKernel::parse(best);
    GemmChoice c;
    const bool ok = !bms.empty() && !(row >> extra) && gemm_class_valid(cls) && w && b && b->mma != blocks &&
                    !(blocks && w->mma) && gemm_candidate_fits(*w, info, lanes) &&
                    gemm_candidate_fits(*b, info, lanes) && parse_ms(wms, c.winner_ms) && parse_ms(bms, c.best_mma_ms) &&
                    !table.count(cls);
    if (!ok) {
      why = "corrupt: line " + std::to_string(no) + " (\"" + line + "\") is not \"class winner ms best-mma ms\"";
      return std::nullopt;
    }
    c.winner = *w;
    c.best_mma = *b;
    table[cls] = c;
  }
  return table;
}

GemmChoice gemm_default_choice(uint32_t vendor, const std::string& cls) {
  // Rows "vendor pattern winner best-mma", the first that matches wins;
  // the file ends with a row for every vendor and class.
  std::istringstream in(kDefaults);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    std::string v, pattern, winner, best;
    row >> v >> pattern >> winner >> best;
    if (v != "*" && std::strtoul(v.c_str(), nullptr, 16) != vendor) continue;
    if (!gemm_class_matches(pattern, cls)) continue;
    const auto w = GemmKernel::parse(winner), b = GemmKernel::parse(best);
    if (w && b) return {*w, *b};
  }
  return {GemmKernel{}, GemmKernel{.mma = true}};
}

}  // namespace vkamp::ops
