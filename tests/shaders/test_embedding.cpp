// Token plus position embedding and its gradients against double
// references, in every format, at awkward (batch, seq_len, cols, vocab);
// ids that repeat (one id over most of the batch, one id everywhere), more
// rows than one shader loop may run on lavapipe, ids
// past the vocabulary (NaN rows, no dwte contribution); a table larger
// than one storage binding; and the gradients
// against central differences of sum(y * r).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "vkamp/knobs.hpp"
#include "vkamp/ops/embedding.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

struct Dims {
  uint32_t batch, seq_len, cols, vocab;
  uint32_t rows() const { return batch * seq_len; }
};

// 1 of everything; then odd sizes, a vocabulary smaller and larger than
// the rows, cols past one 256-wide workgroup.
constexpr Dims kDims[] = {{1, 1, 1, 1}, {3, 7, 5, 11}, {2, 33, 64, 65}, {5, 16, 127, 7}, {1, 40, 300, 97}};

std::vector<double> forward_reference(const Dims& d, const std::vector<uint32_t>& ids, const std::vector<float>& wte,
                                      const std::vector<float>& wpe) {
  std::vector<double> y(size_t(d.rows()) * d.cols);
  for (uint32_t r = 0; r < d.rows(); ++r)
    for (uint32_t c = 0; c < d.cols; ++c)
      y[size_t(r) * d.cols + c] = ids[r] < d.vocab ? double(wte[size_t(ids[r]) * d.cols + c]) +
                                                         wpe[size_t(r % d.seq_len) * d.cols + c]
                                                   : std::nan("");
  return y;
}

struct Grads {
  std::vector<double> dwte, dwpe;
};

Grads backward_reference(const Dims& d, const std::vector<uint32_t>& ids, const std::vector<float>& dy) {
  Grads g{std::vector<double>(size_t(d.vocab) * d.cols, 0.0), std::vector<double>(size_t(d.seq_len) * d.cols, 0.0)};
  for (uint32_t r = 0; r < d.rows(); ++r)
    for (uint32_t c = 0; c < d.cols; ++c) {
      double v = dy[size_t(r) * d.cols + c];
      if (ids[r] < d.vocab) g.dwte[size_t(ids[r]) * d.cols + c] += v;
      g.dwpe[size_t(r % d.seq_len) * d.cols + c] += v;
    }
  return g;
}

std::vector<double> plus(std::vector<double> a, const std::vector<float>& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}

// The most rows any one gradient value sums.
uint32_t most_rows_per_key(const Dims& d, const std::vector<uint32_t>& ids) {
  std::vector<uint32_t> count(d.vocab, 0);
  for (uint32_t id : ids)
    if (id < d.vocab) ++count[id];
  return std::max(d.batch, *std::max_element(count.begin(), count.end()));
}

class Embedding : public GpuTestP<Format> {
 protected:
  Format fmt() const { return GetParam(); }

  Buffer upload_ids(const std::vector<uint32_t>& ids) {
    Buffer b(ctx(), ids.size() * sizeof(uint32_t));
    b.write(ids);
    return b;
  }

  std::vector<float> forward(Format f, const Dims& d, const std::vector<uint32_t>& ids, const std::vector<float>& wte,
                             const std::vector<float>& wpe) {
    Buffer ib = upload_ids(ids), teb = upload(ctx(), f, wte), peb = upload(ctx(), f, wpe);
    Buffer yb = poisoned(ctx(), f, size_t(d.rows()) * d.cols);
    Sequence seq(ctx());
    seq.begin();
    ops::embedding_forward(seq, f, ib, teb, BufferView(peb), yb, d.rows(), d.seq_len, d.cols, d.vocab);
    seq.end();
    seq.run();
    return download(yb, f, size_t(d.rows()) * d.cols);
  }

  // dwte and dwpe into poisoned buffers, or added to `old` when given.
  std::pair<std::vector<float>, std::vector<float>> backward(const Dims& d, const std::vector<uint32_t>& ids,
                                                             const std::vector<float>& dy,
                                                             const std::vector<float>* old_te = nullptr,
                                                             const std::vector<float>* old_pe = nullptr) {
    size_t nte = size_t(d.vocab) * d.cols, npe = size_t(d.seq_len) * d.cols;
    Buffer ib = upload_ids(ids), dyb = upload(ctx(), fmt(), dy);
    Buffer teb = old_te ? upload(ctx(), fmt(), *old_te) : poisoned(ctx(), fmt(), nte);
    Buffer peb = old_pe ? upload(ctx(), fmt(), *old_pe) : poisoned(ctx(), fmt(), npe);
    Sequence seq(ctx());
    seq.begin();
    ops::embedding_backward(seq, fmt(), ib, dyb, teb, BufferView(peb), d.rows(), d.seq_len, d.cols, d.vocab,
                            {old_te != nullptr, old_pe != nullptr});
    seq.end();
    seq.run();
    return {download(teb, fmt(), nte), download(peb, fmt(), npe)};
  }

  std::vector<uint32_t> random_ids(const Dims& d) {
    std::vector<uint32_t> ids(d.rows());
    std::uniform_int_distribution<uint32_t> any(0, d.vocab - 1);
    for (uint32_t& id : ids) id = any(rng());
    return ids;
  }

  // Positive mean: the sums do not cancel, so a relative bound applies.
  std::vector<float> upstream(const Dims& d) { return random_values(size_t(d.rows()) * d.cols, -1, 3, fmt()); }

  // One fp32 add of two stored values, then the rounding to the format: 1 ulp.
  double forward_bound() const { return nmse_bound(fmt(), 1); }
  // An fp32 sum of up to `terms` same-signed-on-average values, random-walk
  // rounding ~sqrt(terms)/3 ulps (allow sqrt(terms)), one more add when
  // accumulating, then one rounding to the format.
  double sum_bound(uint32_t terms) const {
    return nmse_bound(fmt(), 1) + nmse_bound(Format::F32, std::sqrt(double(terms)) + 1);
  }

  void expect_backward(const Dims& d, const std::vector<uint32_t>& ids) {
    std::vector<float> dy = upstream(d);
    Grads ref = backward_reference(d, ids, dy);
    double bound = sum_bound(most_rows_per_key(d, ids));
    auto [dwte, dwpe] = backward(d, ids, dy);
    EXPECT_TRUE(close_to(dwte, ref.dwte, bound));
    EXPECT_TRUE(close_to(dwpe, ref.dwpe, bound));
  }

  // The token gradient over a real vocabulary, 64 tokens of Qwen2.5-0.5B's
  // hidden 896: ids at random, one repeated, the table's last row, and ids
  // either side of 65,535 (modulo a smaller vocabulary).
  void expect_backward_at_vocabulary(uint32_t vocab) {
    const Dims d{2, 32, 896, vocab};
    std::vector<uint32_t> ids = random_ids(d);
    const uint32_t edges[] = {65534, 65535, 65536, vocab - 1, vocab - 1, ids[0], ids[0]};
    for (size_t i = 0; i < std::size(edges); ++i) ids[1 + 5 * i] = edges[i] % vocab;
    expect_backward(d, ids);
  }

  template <class Check>
  void for_each_dims(Check check) {
    for (const Dims& d : kDims) {
      SCOPED_TRACE(::testing::Message() << "batch " << d.batch << ", seq_len " << d.seq_len << ", cols " << d.cols
                                        << ", vocab " << d.vocab);
      check(d);
    }
  }
};

TEST_P(Embedding, Forward) {
  for_each_dims([&](const Dims& d) {
    std::vector<uint32_t> ids = random_ids(d);
    // |wpe| >= 1, so an unwritten or wte-only element cannot pass.
    std::vector<float> wte = random_values(size_t(d.vocab) * d.cols, -2, 2, fmt()),
                       wpe = random_values(size_t(d.seq_len) * d.cols, 1, 3, fmt());
    EXPECT_TRUE(close_to(forward(fmt(), d, ids, wte, wpe), forward_reference(d, ids, wte, wpe), forward_bound()));
  });
}

// Llama's embed_tokens: no position table. The rows are wte's own values
// (a copy, exact), and the backward's dwte is what it is with positions.
TEST_P(Embedding, WithoutPositions) {
  for_each_dims([&](const Dims& d) {
    const std::vector<uint32_t> ids = random_ids(d);
    const std::vector<float> wte = random_values(size_t(d.vocab) * d.cols, -2, 2, fmt());
    Buffer ib = upload_ids(ids), teb = upload(ctx(), fmt(), wte);
    Buffer yb = poisoned(ctx(), fmt(), size_t(d.rows()) * d.cols);
    const std::vector<float> dy = upstream(d);
    Buffer dyb = upload(ctx(), fmt(), dy), dteb = poisoned(ctx(), fmt(), size_t(d.vocab) * d.cols);
    Sequence seq(ctx());
    seq.begin();
    ops::embedding_forward(seq, fmt(), ib, teb, std::nullopt, yb, d.rows(), d.seq_len, d.cols, d.vocab);
    ops::embedding_backward(seq, fmt(), ib, dyb, dteb, std::nullopt, d.rows(), d.seq_len, d.cols, d.vocab);
    seq.end();
    seq.run();
    const std::vector<float> y = download(yb, fmt(), size_t(d.rows()) * d.cols);
    for (uint32_t r = 0; r < d.rows(); ++r)
      for (uint32_t c = 0; c < d.cols; ++c) ASSERT_EQ(y[size_t(r) * d.cols + c], wte[size_t(ids[r]) * d.cols + c]);
    EXPECT_TRUE(close_to(download(dteb, fmt(), size_t(d.vocab) * d.cols), backward_reference(d, ids, dy).dwte,
                         sum_bound(most_rows_per_key(d, ids))));
  });
}

TEST_P(Embedding, Backward) {
  for_each_dims([&](const Dims& d) { expect_backward(d, random_ids(d)); });
}

TEST_P(Embedding, BackwardAccumulates) {
  for_each_dims([&](const Dims& d) {
    std::vector<uint32_t> ids = random_ids(d);
    std::vector<float> dy = upstream(d), old_te = random_values(size_t(d.vocab) * d.cols, 0, 4, fmt()),
                       old_pe = random_values(size_t(d.seq_len) * d.cols, 0, 4, fmt());
    Grads ref = backward_reference(d, ids, dy);
    double bound = sum_bound(most_rows_per_key(d, ids) + 1);
    auto [dwte, dwpe] = backward(d, ids, dy, &old_te, &old_pe);
    EXPECT_TRUE(close_to(dwte, plus(ref.dwte, old_te), bound));
    EXPECT_TRUE(close_to(dwpe, plus(ref.dwpe, old_pe), bound));
  });
}

TEST_P(Embedding, ScanAndScatterGiveTheSameBits) {
  // The token gradient's two schemes (embedding_grad.comp) add the same
  // terms in the same order, whichever the device would pick.
  for_each_dims([&](const Dims& d) {
    std::vector<uint32_t> ids = random_ids(d);
    ids.back() = d.vocab;  // past the vocabulary: no dwte row either way
    std::vector<float> dy = upstream(d);
    auto with = [&](bool scatter) {
      KernelPaths p;
      p.embedding_scatter = scatter;
      UsePaths use(p);
      return backward(d, ids, dy).first;
    };
    std::vector<float> scan = with(false), scatter = with(true);
    EXPECT_EQ(0, std::memcmp(scan.data(), scatter.data(), scan.size() * sizeof(float)));
  });
}

TEST_P(Embedding, OneIdOverMostOfTheBatch) {
  // Every row but every fifth is id vocab - 1: its dwte row sums most of dy.
  for_each_dims([&](const Dims& d) {
    std::vector<uint32_t> ids = random_ids(d);
    for (uint32_t r = 0; r < d.rows(); ++r)
      if (r % 5 != 0) ids[r] = d.vocab - 1;
    expect_backward(d, ids);
  });
}

TEST_P(Embedding, OneIdEverywhere) {
  for_each_dims([&](const Dims& d) {
    std::vector<uint32_t> ids(d.rows(), d.vocab / 2);
    expect_backward(d, ids);
  });
}

TEST_P(Embedding, MoreRowsThanOneShaderLoopMayRun) {
  // 70000 rows: past lavapipe's 65535 iterations per loop, and 10000
  // batches per position, so both gradients span several chunks. One id on
  // most rows puts them all in one sum.
  const Dims d{10000, 7, 3, 5};
  SCOPED_TRACE("batch 10000, seq_len 7, cols 3, vocab 5");
  std::vector<uint32_t> ids = random_ids(d);
  for (uint32_t r = 0; r < d.rows(); ++r)
    if (r % 5 != 0) ids[r] = 2;
  expect_backward(d, ids);
}

TEST_P(Embedding, IdsPastTheVocabularyGiveNanRowsAndNoTokenGradient) {
  for_each_dims([&](const Dims& d) {
    std::vector<uint32_t> ids = random_ids(d);
    const uint32_t bad[] = {d.vocab, d.vocab + 5, 0xFFFFFFFFu};
    for (uint32_t r = 0; r < d.rows(); r += 3) ids[r] = bad[(r / 3) % 3];
    std::vector<float> wte = random_values(size_t(d.vocab) * d.cols, -2, 2, fmt()),
                       wpe = random_values(size_t(d.seq_len) * d.cols, 1, 3, fmt());
    // The reference has NaN rows exactly where the ids are bad.
    EXPECT_TRUE(close_to(forward(fmt(), d, ids, wte, wpe), forward_reference(d, ids, wte, wpe), forward_bound()));
    // dwte: only the valid rows; dwpe: every row (its position is valid).
    expect_backward(d, ids);
  });
}

// Qwen2's 151,936-row table, wide enough to pass one storage binding
// (lavapipe's and Adreno's 128 MiB): the forward reads it in views of rows,
// one pass over the tokens each. Ids at both sides of every view's edge,
// above 65,535, and past the table (NaN rows, written by the last view).
TEST_P(Embedding, ForwardOverATableLargerThanOneBinding) {
  const uint64_t range = ctx().info().max_storage_range;
  if (range > (uint64_t(1) << 28)) GTEST_SKIP() << "this device binds " << range << " bytes: too large to pass here";
  const uint32_t vocab = 151936, cols = uint32_t(range / (uint64_t(vocab) * format_bytes(fmt())) + 1);
  const Dims d{2, 16, cols, vocab};
  std::vector<uint32_t> ids = random_ids(d);
  const uint32_t per_view = uint32_t(range / (uint64_t(cols) * format_bytes(fmt())));
  const uint32_t edges[] = {0, per_view - 1, per_view, per_view + 1, 65535, 65536, vocab - 1, vocab, 0xFFFFFFFFu};
  std::copy(std::begin(edges), std::end(edges), ids.begin() + 3);
  std::vector<float> wte = random_values(size_t(vocab) * cols, -2, 2, fmt()),
                     wpe = random_values(size_t(d.seq_len) * cols, 1, 3, fmt());
  EXPECT_TRUE(close_to(forward(fmt(), d, ids, wte, wpe), forward_reference(d, ids, wte, wpe), forward_bound()));
}

// GPT-2's 50,257 rows: their fp32 partials (180 MB) pass lavapipe's 128
// MiB binding, so a CPU driver's scatter path sums two views. A suite of
// its own (RealSize/, not Shaders/): the token gradient's scan variant
// (path_variants.cpp) would take minutes over it on lavapipe.
class EmbeddingGpt2Vocabulary : public Embedding {};

TEST_P(EmbeddingGpt2Vocabulary, Backward) { expect_backward_at_vocabulary(50257); }

// Qwen2's 151,936 rows of 896, past lavapipe's 128 MiB binding in every
// format (the forward's ForwardOverATableLargerThanOneBinding).
class EmbeddingQwen2Vocabulary : public Embedding {};

TEST_P(EmbeddingQwen2Vocabulary, Backward) { expect_backward_at_vocabulary(151936); }

TEST_P(Embedding, BackwardMatchesFiniteDifferences) {
  // L = sum(r * y) with the forward in F32; dL/dwte and dL/dwpe from the
  // backward (dy = r) in the format under test. L is linear in both tables,
  // so a large step costs nothing: the two sides differ by rounding only.
  // Ids from a small range, so that rows share a token.
  const float h = 0.5f;
  for_each_dims([&](const Dims& d) {
    std::vector<uint32_t> ids(d.rows());
    std::uniform_int_distribution<uint32_t> few(0, std::min(d.vocab, 3u) - 1);
    for (uint32_t& id : ids) id = few(rng());
    size_t nte = size_t(d.vocab) * d.cols, npe = size_t(d.seq_len) * d.cols;
    std::vector<float> wte = random_values(nte, -1, 1, Format::F32), wpe = random_values(npe, -1, 1, Format::F32);
    std::vector<float> r = upstream(d);
    std::vector<float> v = random_values(nte + npe, 0.5f, 1, Format::F32);
    std::vector<float> te_p(nte), te_m(nte), pe_p(npe), pe_m(npe);
    for (size_t i = 0; i < nte; ++i) {
      te_p[i] = wte[i] + h * v[i];
      te_m[i] = wte[i] - h * v[i];
    }
    for (size_t i = 0; i < npe; ++i) {
      pe_p[i] = wpe[i] + h * v[nte + i];
      pe_m[i] = wpe[i] - h * v[nte + i];
    }
    auto loss = [&](const std::vector<float>& te, const std::vector<float>& pe) {
      std::vector<float> y = forward(Format::F32, d, ids, te, pe);
      double l = 0;
      for (size_t i = 0; i < y.size(); ++i) l += double(r[i]) * y[i];
      return l;
    };
    double fd = loss(te_p, pe_p) - loss(te_m, pe_m);
    auto [dwte, dwpe] = backward(d, ids, r);
    double dot = 0, g_norm = 0, step_norm = 0;
    auto add = [&](const std::vector<float>& g, const std::vector<float>& p, const std::vector<float>& m) {
      for (size_t i = 0; i < g.size(); ++i) {
        double step = double(p[i]) - m[i];  // the step actually taken
        dot += g[i] * step;
        g_norm += double(g[i]) * g[i];
        step_norm += step * step;
      }
    };
    add(dwte, te_p, te_m);
    add(dwpe, pe_p, pe_m);
    // Relative to |g| |step|: the gradients are fp32 sums (sqrt(rows) ulps,
    // as in Backward) rounded once to the format (1 ulp); the F32 forward
    // rounds each wte + wpe, which reaches the difference of the losses as
    // up to ~8 ulps of |g| |step| for one row, less as the rows grow.
    double bound = nmse_bound(fmt(), 1) + nmse_bound(Format::F32, 8 + std::sqrt(double(d.rows())));
    double err = (dot - fd) * (dot - fd) / (g_norm * step_norm);
    EXPECT_LE(err, bound) << "<g, step> " << dot << ", central difference " << fd;
  });
}

INSTANTIATE_TEST_SUITE_P(Shaders, Embedding, ::testing::ValuesIn(kAllFormats),
                         // "<format>_dims": the fp16 storage-only ctest filters on "*fp16_*".
                         [](const ::testing::TestParamInfo<Format>& info) {
                           return std::string(format_name(info.param)) + "_dims";
                         });
INSTANTIATE_TEST_SUITE_P(RealSize, EmbeddingGpt2Vocabulary, ::testing::ValuesIn(kAllFormats),
                         [](const ::testing::TestParamInfo<Format>& info) {
                           return std::string(format_name(info.param)) + "_dims";
                         });
INSTANTIATE_TEST_SUITE_P(Large, EmbeddingQwen2Vocabulary, ::testing::ValuesIn(kAllFormats),
                         [](const ::testing::TestParamInfo<Format>& info) {
                           return std::string(format_name(info.param)) + "_dims";
                         });

}  // namespace
}  // namespace vkamp::test
