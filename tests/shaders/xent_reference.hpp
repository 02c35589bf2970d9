// The softmax cross-entropy reference in double, shared by the loss tests
// at small class counts (test_losses.cpp) and at real vocabularies
// (test_losses_vocabulary.cpp).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "support/numerics.hpp"
#include "vkamp/data/host_data.hpp"
#include "vkamp/ops/losses.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {

template <class T>
struct XentOf {
  std::vector<T> row_loss;
  T loss;
  std::vector<T> dlogits;
};
using Xent = XentOf<double>;

// Per-row loss logsumexp(z) - z[label], its mean over the target rows, and
// (softmax(z) - onehot(label)) * scale / targets. A row whose label is
// marked data::kNotTarget is 0 throughout, whatever its logits. A row with a
// NaN or +inf logit or a label out of range is NaN throughout: such values
// must never pass as a loss.
inline Xent xent_reference(const std::vector<float>& logits, const std::vector<uint32_t>& labels, uint32_t classes,
                    double scale) {
  size_t rows = labels.size();
  Xent x{std::vector<double>(rows), 0, std::vector<double>(logits.size())};
  const double targets = std::max<double>(
      1, double(std::count_if(labels.begin(), labels.end(), [](uint32_t l) { return !(l & data::kNotTarget); })));
  for (size_t r = 0; r < rows; ++r) {
    if (labels[r] & data::kNotTarget) continue;
    std::span<const float> z(logits.data() + r * classes, classes);
    bool bad = labels[r] >= classes || std::any_of(z.begin(), z.end(), [](float v) { return !(v < kInf); });
    double mx = *std::max_element(z.begin(), z.end()), s = 0;
    for (float v : z) s += std::exp(v - mx);
    x.row_loss[r] = bad ? kNan : mx + std::log(s) - z[labels[r]];
    for (uint32_t c = 0; c < classes; ++c)
      x.dlogits[r * classes + c] = bad ? kNan : (std::exp(z[c] - mx) / s - (c == labels[r])) * scale / targets;
    x.loss += x.row_loss[r] / targets;
  }
  return x;
}

// Forward and backward on the GPU in `f`, every output poisoned first; the
// count of targets the forward leaves after the rows is checked exactly.
inline XentOf<float> run_xent(Context& ctx, Format f, const std::vector<float>& logits,
                              const std::vector<uint32_t>& labels, uint32_t classes, float scale) {
  const uint32_t rows = uint32_t(labels.size());
  Buffer z = upload(ctx, f, logits), s = upload(ctx, Format::F32, std::vector<float>{scale});
  Buffer lab(ctx, labels.size() * 4);
  lab.write(labels);
  Buffer row_loss = poisoned(ctx, Format::F32, rows + 1), loss = poisoned(ctx, Format::F32, 1);
  Buffer dz = poisoned(ctx, f, logits.size());
  Sequence seq(ctx);
  seq.begin();
  ops::softmax_xent_forward(seq, f, z, lab, row_loss, loss, rows, classes);
  ops::softmax_xent_backward(seq, f, z, lab, s, row_loss, dz, rows, classes);
  seq.end();
  seq.run();
  std::vector<float> per_row = download(row_loss, Format::F32, rows + 1);
  const auto targets = std::count_if(labels.begin(), labels.end(), [](uint32_t l) { return !(l & data::kNotTarget); });
  EXPECT_EQ(per_row.back(), float(std::max<ptrdiff_t>(targets, 1)));
  per_row.pop_back();
  return {per_row, download(loss, Format::F32, 1)[0], download(dz, f, logits.size())};
}

}  // namespace vkamp::test
