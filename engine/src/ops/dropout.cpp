#include "vkamp/ops/dropout.hpp"

#include <cmath>

#include "vkamp/gpu_abi/dropout.h"
#include "op_util.hpp"
#include "vkamp/error.hpp"

namespace vkamp::ops {

uint32_t dropout_threshold(double p) {
  const double t = std::round(p * 4294967296.0);
  return t >= 4294967295.0 ? 0xFFFFFFFFu : uint32_t(t);
}

float dropout_scale(double p) { return float(1.0 / (1.0 - p)); }

void dropout(Sequence& seq, Format fmt, BufferView x, BufferView y, uint32_t n, double p, const DropoutKey& key) {
  if (!(p >= 0 && p < 1)) throw Error("dropout: the probability " + std::to_string(p) + " is not in [0, 1)");
  if (!key.counter || (uint64_t(key.counter_word) + 1) * 4 > key.counter->bytes())
    throw Error("dropout: the step counter is missing or too small");
  const size_t eb = format_bytes(fmt);
  detail::require("dropout", "x", x, n, eb);
  detail::require("dropout", "y", y, n, eb);
  const shader::DropoutPush push{n,
                                 dropout_threshold(p),
                                 dropout_scale(p),
                                 uint32_t(key.seed),
                                 uint32_t(key.seed >> 32),
                                 key.counter_word,
                                 key.stream,
                                 key.salt};
  auto k = detail::kernel<shader::DropoutShader>(seq, fmt);
  const uint32_t groups = n / 4 + (n % 4 != 0);
  seq.dispatch(k, {x, y, *key.counter}, push, detail::grid_stride_groups(groups), "dropout");
}

}  // namespace vkamp::ops
