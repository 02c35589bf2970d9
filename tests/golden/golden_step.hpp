// One step of a golden test on the GPU: the forward, the mean softmax
// cross-entropy, its gradient times `scale` and the backward, into a model
// whose outputs and gradients are poisoned first (anything unwritten stays
// NaN and fails the comparison). Returns the loss.
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/ops/losses.hpp"
#include "vkamp/train/model.hpp"

namespace vkamp::test {

// A fixture's I64 tensor of token ids (what PyTorch indexes with) as the
// uint32 ids vkamp reads.
inline std::vector<uint32_t> token_ids(const io::TensorFile& f, const std::string& name, const std::string& path) {
  const io::Tensor* t = f.find(name);
  if (!t || t->dtype != io::DType::I64) throw std::runtime_error(path + ": no I64 " + name);
  std::vector<uint32_t> out(t->elements());
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t v;
    std::memcpy(&v, t->data.data() + 8 * i, 8);
    out[i] = uint32_t(v);
  }
  return out;
}

// `examples` rows of x (the model's rows); `positions` x `classes` logits
// each, with a label per position in y.
inline float golden_forward_backward(train::Model& m, Format fmt, const Buffer& x, const Buffer& y,
                                     uint32_t examples, uint32_t positions, uint32_t classes, float scale) {
  const uint32_t rows = examples * positions;
  Buffer s_buf = upload(ctx(), Format::F32, std::vector<float>{scale});
  Buffer row_loss(ctx(), ops::softmax_xent_scratch_bytes(rows)), loss(ctx(), 4);
  // A trainer's language model runs its head a chunk of rows at a time
  // (train/logit_chunks.hpp): the head's input is then what is poisoned.
  train::LogitChunks* chunks = m.logit_chunks();
  (chunks ? m.hidden() : m.output()).fill(kPoison);
  m.grads().fill(kPoison);
  loss.fill(kPoison);
  run_once([&](Sequence& seq) {
    m.record_forward(seq, x, examples);
    if (chunks) {
      chunks->record_loss(seq, m.head_weight(), m.hidden(), y, s_buf, row_loss, loss, m.hidden_grad(), rows, 0);
      m.record_backward(seq, x, examples, /*accumulate=*/false);
      return;
    }
    ops::softmax_xent_forward(seq, fmt, m.output(), y, row_loss, loss, rows, classes);
    ops::softmax_xent_backward(seq, fmt, m.output(), y, s_buf, row_loss, m.doutput(), rows, classes);
    m.record_backward(seq, x, examples, /*accumulate=*/false);
  });
  return loss.read<float>()[0];
}

// The same from token ids and labels on the host.
inline float golden_forward_backward(train::Model& m, Format fmt, const std::vector<uint32_t>& ids,
                                     const std::vector<uint32_t>& labels, uint32_t examples, uint32_t positions,
                                     uint32_t classes, float scale) {
  Buffer x(ctx(), ids.size() * 4), y(ctx(), labels.size() * 4);
  x.write(ids);
  y.write(labels);
  return golden_forward_backward(m, fmt, x, y, examples, positions, classes, scale);
}

}  // namespace vkamp::test
