#include "attention_defaults.hpp"

#include <cstdlib>
#include <sstream>
#include <vector>

#include "vkamp/error.hpp"
#include "vkamp/knobs.hpp"

namespace vkamp::ops::detail {
namespace {

const char* kDefaults =
#include "attention_defaults.inc"
    ;

struct Row {
  std::string type, vendor;  // cpu, gpu or *; hex or *
  AttentionDefaults choice;
};

// The table, read once.
const std::vector<Row>& rows() {
  static const std::vector<Row> table = [] {
    std::vector<Row> out;
    std::istringstream in(kDefaults);
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream row(line);
      std::string type, v, path, fused, mma, extra;
      row >> type >> v >> path >> fused >> mma >> extra;
      const auto f = parse_dims(fused), m = parse_dims(mma);
      if (!f || !m || !extra.empty() || (type != "cpu" && type != "gpu" && type != "*") ||
          (path != "fused" && path != "mma" && path != "materialized"))
        throw Error("attention_defaults.txt: malformed row \"" + line + "\"");
      out.push_back({type, v, {path, *f, *m}});
    }
    return out;
  }();
  return table;
}

}  // namespace

AttentionDefaults attention_defaults(bool cpu, uint32_t vendor) {
  for (const Row& r : rows()) {
    if (r.type != "*" && (r.type == "cpu") != cpu) continue;
    if (r.vendor != "*" && std::strtoul(r.vendor.c_str(), nullptr, 16) != vendor) continue;
    return r.choice;
  }
  throw Error(std::string("attention_defaults.txt: no row for a ") + (cpu ? "CPU driver" : "GPU"));
}

std::string attention_path(const Context& ctx) {
  if (ctx.paths().attention) return attention_path_name(*ctx.paths().attention);
  const std::string path =
      attention_defaults(ctx.info().type == VK_PHYSICAL_DEVICE_TYPE_CPU, ctx.info().vendor_id).path;
  return path == "mma" && ctx.gemm_mma() != GemmMma::coopmat ? "fused" : path;
}

}  // namespace vkamp::ops::detail
