#include "vkamp/train/evaluator.hpp"

#include <algorithm>

#include "vkamp/error.hpp"
#include "vkamp/ops/losses.hpp"
#include "vkamp/ops/reduce.hpp"

namespace vkamp::train {

Evaluator::Evaluator(Context& ctx, Model& model, LossKind loss, uint32_t max_rows, size_t chunk_bytes)
    : ctx_(ctx), model_(model), loss_(loss), max_rows_(max_rows), chunk_bytes_(chunk_bytes),
      batch_x_(ctx, size_t(max_rows) * model.input_row_bytes()),
      // Labels (uint32, one per position) or target rows in the storage format.
      batch_y_(ctx, size_t(max_rows) * (loss == LossKind::SoftmaxXent ? model.positions() * 4
                                                                      : model.outputs() * format_bytes(model.format()))),
      row_loss_(ctx, ops::softmax_xent_scratch_bytes(max_rows * model.positions())) {}

Buffer Evaluator::upload(const std::vector<float>& values) {
  auto bytes = pack(model_.format(), values);
  Buffer b(ctx_, std::max<size_t>(bytes.size(), 4));
  b.write(bytes.data(), bytes.size());
  return b;
}

Buffer Evaluator::upload_inputs(const std::vector<float>& x) {
  if (!model_.reads_ids()) return upload(x);
  const std::vector<uint32_t> ids = data::token_ids(x);
  Buffer b(ctx_, std::max<size_t>(ids.size() * 4, 4));
  b.write(ids);
  return b;
}

Buffer Evaluator::upload_labels(const data::HostData& data) {
  if (data.labels.size() != size_t(data.count) * model_.positions())
    throw Error("evaluate: " + std::to_string(data.labels.size()) + " labels for " + std::to_string(data.count) +
                " examples of " + std::to_string(model_.positions()) + " positions");
  Buffer y(ctx_, std::max<size_t>(data.labels.size() * 4, 4));
  y.write(data.labels);
  return y;
}

template <class First, class After>
void Evaluator::run_batches(const Buffer& x, uint32_t rows, First first, After after) {
  const size_t row_bytes = model_.input_row_bytes();
  const uint32_t batches = div_up(rows, max_rows_);
  // Every submission waits for the GPU: a few dozen parts when someone
  // watches, one otherwise.
  const uint32_t per_part = on_progress ? std::max(1u, div_up(batches, 40)) : std::max(batches, 1u);
  Sequence seq(ctx_);
  for (uint32_t part = 0; part * per_part < std::max(batches, 1u); ++part) {
    seq.begin();
    if (part == 0) first(seq);
    const uint32_t end = std::min(batches, (part + 1) * per_part);
    for (uint32_t b = part * per_part; b < end; ++b) {
      const uint32_t n = std::min(max_rows_, rows - b * max_rows_);
      seq.copy(x, batch_x_, n * row_bytes, size_t(b) * max_rows_ * row_bytes);
      model_.record_forward(seq, batch_x_, n, graph::ForwardMode::Eval);  // running statistics
      after(seq, b, n);
    }
    seq.end();
    seq.run();
    if (on_progress) on_progress(rows_before_ + std::min<uint64_t>(uint64_t(end) * max_rows_, rows), rows_total_);
  }
}

uint32_t Evaluator::chunk_rows() const {
  const size_t row_bytes = model_.input_row_bytes();
  const size_t batches = std::max<size_t>(1, chunk_bytes_ / (row_bytes * max_rows_));
  return uint32_t(std::min<size_t>(batches * max_rows_, UINT32_MAX / 2));
}

template <class SumOver>
auto Evaluator::sum_in_chunks(const data::HostData& data, SumOver sum_over) -> decltype(sum_over(data)) {
  if (data.features != model_.inputs()) throw Error("evaluate: feature count differs from the training data");
  decltype(sum_over(data)) total{};
  const uint32_t step = chunk_rows();
  rows_before_ = 0;
  rows_total_ = data.count;
  if (data.count <= step && !data.is_windows()) return sum_over(data);  // one upload, no copy of the set
  for (uint32_t first = 0; first < data.count; first += step) {
    rows_before_ = first;
    total += sum_over(data.rows(first, std::min(step, data.count - first)));
  }
  return total;
}

double Evaluator::evaluate(const data::HostData& data) {
  if (data.count == 0) return 0;
  if (loss_ == LossKind::SoftmaxXent) {
    const ClassTally t = sum_in_chunks(data, [&](const data::HostData& c) { return classify_in(c, true, false); });
    return t.targets ? t.correct / t.targets : 0;
  }
  return sum_in_chunks(data, [&](const data::HostData& c) { return squared_error_in(c); }) /
         (double(data.count) * model_.outputs());
}

double Evaluator::mean_loss(const data::HostData& data) {
  if (loss_ != LossKind::SoftmaxXent) return evaluate(data);
  if (data.count == 0) return 0;
  const ClassTally t = sum_in_chunks(data, [&](const data::HostData& c) { return classify_in(c, false, true); });
  return t.targets ? t.loss / t.targets : 0;
}

Evaluator::Scores Evaluator::scores(const data::HostData& data) {
  if (loss_ != LossKind::SoftmaxXent) {
    const double mse = evaluate(data);
    return {mse, mse};
  }
  if (data.count == 0) return {};
  const ClassTally t = sum_in_chunks(data, [&](const data::HostData& c) { return classify_in(c, true, true); });
  return t.targets ? Scores{t.correct / t.targets, t.loss / t.targets} : Scores{};
}

Evaluator::ClassTally Evaluator::classify_in(const data::HostData& data, bool want_correct, bool want_loss) {
  const uint32_t C = model_.classes(), P = model_.positions();
  Buffer x = upload_inputs(data.x);
  Buffer y = upload_labels(data);
  const uint32_t batches = div_up(data.count, max_rows_);
  Buffer correct(ctx_, 4), means(ctx_, size_t(std::max(batches, 1u)) * 4);
  run_batches(
      x, data.count, [&](Sequence& seq) { seq.fill(correct, 0); },
      [&](Sequence& seq, uint32_t b, uint32_t rows) {
        seq.copy(y, batch_y_, size_t(rows) * P * 4, size_t(b) * max_rows_ * P * 4);
        if (LogitChunks* chunks = model_.logit_chunks()) {  // the logits a chunk of rows at a time
          const BufferView c(correct), m(means);
          return chunks->record_eval(seq, model_.head_weight(), model_.hidden(), batch_y_, want_correct ? &c : nullptr,
                                     row_loss_, want_loss ? &m : nullptr, rows * P, b);
        }
        if (want_correct) ops::count_correct(seq, model_.format(), model_.output(), batch_y_, correct, rows * P, C);
        if (want_loss)
          ops::softmax_xent_forward(seq, model_.format(), model_.output(), batch_y_, row_loss_, means, rows * P,
                                    model_.classes(), b);
      });
  ClassTally t;
  // The targets of each batch, counted here: the GPU's mean is over them.
  std::vector<uint32_t> targets(std::max(batches, 1u), 0);
  for (size_t i = 0; i < data.labels.size(); ++i)
    targets[i / (size_t(max_rows_) * P)] += (data.labels[i] & data::kNotTarget) == 0 ? 1 : 0;
  for (uint32_t n : targets) t.targets += n;
  if (want_correct) {
    uint32_t n = 0;
    correct.read(&n, 4);
    t.correct = n;
  }
  if (want_loss) {
    auto m = means.read<float>();
    // Each batch's mean back to its sum, in double.
    for (uint32_t b = 0; b < batches; ++b) t.loss += double(m[b]) * targets[b];
  }
  return t;
}

double Evaluator::squared_error_in(const data::HostData& data) {
  const uint32_t C = model_.outputs();
  Buffer x = upload_inputs(data.x);
  const size_t target_row = size_t(C) * format_bytes(model_.format());
  Buffer y = upload(data.targets);
  Buffer scratch(ctx_, ops::reduce_scratch_bytes(max_rows_ * C));
  const uint32_t batches = div_up(data.count, max_rows_);
  Buffer sums(ctx_, size_t(batches) * 4);
  run_batches(
      x, data.count, [](Sequence&) {},
      [&](Sequence& seq, uint32_t b, uint32_t rows) {
        seq.copy(y, batch_y_, rows * target_row, size_t(b) * max_rows_ * target_row);
        BufferView target(batch_y_);
        ops::sum_squares(seq, model_.format(), model_.output(), &target, rows * C, scratch, sums, b);
      });
  auto s = sums.read<float>();
  double total = 0;
  for (uint32_t b = 0; b < batches; ++b) total += s[b];
  return total;
}

std::vector<float> Evaluator::predict(const std::vector<float>& x, uint32_t rows) {
  const uint32_t C = model_.outputs();
  if (x.size() != size_t(rows) * model_.inputs())
    throw Error("predict: x has " + std::to_string(x.size()) + " values, not " + std::to_string(rows) + " rows of " +
                std::to_string(model_.inputs()));
  const size_t in_row = model_.inputs();
  const uint32_t step = chunk_rows();
  rows_before_ = 0;
  rows_total_ = rows;
  if (rows <= step) return predict_chunk(x, rows);
  std::vector<float> out;
  out.reserve(size_t(rows) * C);
  for (uint32_t first = 0; first < rows; first += step) {
    const uint32_t n = std::min(step, rows - first);
    rows_before_ = first;
    std::vector<float> part(x.begin() + first * in_row, x.begin() + (first + n) * in_row);
    part = predict_chunk(part, n);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

std::vector<float> Evaluator::predict_chunk(const std::vector<float>& x, uint32_t rows) {
  const uint32_t C = model_.outputs();
  if (rows == 0) return {};
  const size_t out_row = size_t(C) * format_bytes(model_.format());
  Buffer xb = upload_inputs(x);
  Buffer out(ctx_, rows * out_row);
  run_batches(xb, rows, [](Sequence&) {}, [&](Sequence& seq, uint32_t b, uint32_t n) {
    seq.copy(model_.output(), out, n * out_row, 0, size_t(b) * max_rows_ * out_row);
  });
  std::vector<uint8_t> bytes(rows * out_row);
  out.read(bytes.data(), bytes.size());
  return unpack(model_.format(), bytes);
}

}  // namespace vkamp::train
