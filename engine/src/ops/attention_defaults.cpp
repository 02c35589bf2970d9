#include "attention_defaults.hpp"

#include <cstdlib>
#include <sstream>

#include "vkamp/error.hpp"
#include "vkamp/knobs.hpp"

namespace vkamp::ops::detail {
namespace {

const char* kDefaults =
#include "attention_defaults.inc"
    ;

}  // namespace

AttentionDefaults attention_defaults(bool cpu, uint32_t vendor) {
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
    if (type != "*" && (type == "cpu") != cpu) continue;
    if (v != "*" && std::strtoul(v.c_str(), nullptr, 16) != vendor) continue;
    return {path, *f, *m};
  }
  throw Error(std::string("attention_defaults.txt: no row for a ") + (cpu ? "CPU driver" : "GPU"));
}

}  // namespace vkamp::ops::detail
