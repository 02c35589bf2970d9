// Gated linear units y = f(gate) * up for every activation of the list
// (SwiGLU is f = SiLU), forward and backward against a double reference at
// every format and size, gradients written, added and skipped, inf and NaN
// where the reference has them, repeatable bits, and the backward against
// central differences of the fp32 forward.
//
// Bounds (ErrorBudget): each output is one fp32 expression rounded once to
// the format. In fp32, f and f' err by up to 32 ulps (test_activation.cpp's
// bound: exp's error, amplified where e^(-2|u|) is steep), and each of the
// one or two products adds one: 34 ulps of the term. An added gradient
// rounds once more in fp32, an ulp of the sum. Gate values within 0.1 of
// the point where f' cancels (cancelling_root) are kept out of the
// backward, as in test_activation.cpp.
#include <cmath>
#include <cstring>

#include "support/cases.hpp"
#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "vkamp/ops/glu.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

using Act = ops::Activation;
using ops::GradWrite;

struct Result {
  std::vector<float> y, dgate, dup;
};

class Glu : public GpuTestP<FormatSize> {
 protected:
  Format fmt() const { return std::get<0>(GetParam()); }
  uint32_t n() const { return std::get<1>(GetParam()); }

  std::vector<float> gates(Act act, float lo = -4, float hi = 4) {
    std::vector<float> g = random_values(n(), lo, hi, fmt());
    for (float& v : g)
      while (std::abs(v - cancelling_root(act)) < 0.1) v = random_values(1, lo, hi, fmt())[0];
    return g;
  }

  // Forward and backward in one recording; `old` holds the gradients' old
  // values where they are added.
  Result run(Format f, Act act, const std::vector<float>& gate, const std::vector<float>& up,
             const std::vector<float>& dy, GradWrite gw, GradWrite uw, const Result* old = nullptr) {
    Buffer gb = upload(ctx(), f, gate), ub = upload(ctx(), f, up), dyb = upload(ctx(), f, dy);
    Buffer yb = poisoned(ctx(), f, n());
    Buffer dgb = gw == GradWrite::Add ? upload(ctx(), f, old->dgate) : poisoned(ctx(), f, n());
    Buffer dub = uw == GradWrite::Add ? upload(ctx(), f, old->dup) : poisoned(ctx(), f, n());
    Sequence seq(ctx());
    seq.begin();
    ops::glu_forward(seq, f, act, gb, ub, yb, n());
    ops::glu_backward(seq, f, act, gb, ub, dyb, dgb, gw, dub, uw, n());
    seq.end();
    seq.run();
    return {download(yb, f, n()), download(dgb, f, n()), download(dub, f, n())};
  }

  // The reference and the bound of one output: `terms` (fp32 ulps of the
  // term) and an old value added to it.
  struct Expected {
    std::vector<double> ref;
    ErrorBudget budget;
    explicit Expected(Format f) : budget(f) {}
    void add(double term, double ulps, double old = 0, bool added = false) {
      const double v = added ? term + old : term;
      ref.push_back(v);
      budget.add(v, budget.rounded(v), ulps * std::abs(term) + (added ? std::abs(v) : 0.0));
    }
  };

  void expect(Act act, const std::vector<float>& gate, const std::vector<float>& up, const std::vector<float>& dy,
              const Result& out, GradWrite gw, GradWrite uw, const Result* old = nullptr) {
    Expected y(fmt()), dg(fmt()), du(fmt());
    for (uint32_t i = 0; i < n(); ++i) {
      const double f = activation_reference(act, gate[i]), fp = activation_grad_reference(act, gate[i]);
      y.add(f * up[i], 33);
      dg.add(double(dy[i]) * up[i] * fp, 34, old ? old->dgate[i] : 0.0, gw == GradWrite::Add);
      du.add(double(dy[i]) * f, 33, old ? old->dup[i] : 0.0, uw == GradWrite::Add);
    }
    const double tiny = smallest_normal(fmt());
    EXPECT_TRUE(close_to(out.y, y.ref, y.budget.bound(), tiny)) << "y";
    if (gw != GradWrite::Skip) {
      EXPECT_TRUE(close_to(out.dgate, dg.ref, dg.budget.bound(), tiny)) << "dgate";
    }
    if (uw != GradWrite::Skip) {
      EXPECT_TRUE(close_to(out.dup, du.ref, du.budget.bound(), tiny)) << "dup";
    }
  }
};

TEST_P(Glu, ForwardAndBackward) {
  for (Act act : ops::kActivations) {
    SCOPED_TRACE(ops::activation_name(act));
    auto gate = gates(act), up = random_values(n(), -4, 4, fmt()), dy = random_values(n(), -2, 2, fmt());
    expect(act, gate, up, dy, run(fmt(), act, gate, up, dy, GradWrite::Write, GradWrite::Write), GradWrite::Write,
           GradWrite::Write);
  }
}

TEST_P(Glu, BackwardAddsSkipsAndRepeatsItsBits) {
  const Act act = Act::SiLU;
  auto gate = gates(act), up = random_values(n(), -4, 4, fmt()), dy = random_values(n(), -2, 2, fmt());
  const Result old{{}, random_values(n(), -3, 3, fmt()), random_values(n(), -3, 3, fmt())};
  for (auto [gw, uw] : {std::pair{GradWrite::Add, GradWrite::Add}, std::pair{GradWrite::Skip, GradWrite::Add},
                        std::pair{GradWrite::Add, GradWrite::Skip}}) {
    const Result a = run(fmt(), act, gate, up, dy, gw, uw, &old);
    expect(act, gate, up, dy, a, gw, uw, &old);
    // A skipped gradient is never written: its buffer keeps the poison.
    for (const std::vector<float>* skipped : {gw == GradWrite::Skip ? &a.dgate : nullptr,
                                              uw == GradWrite::Skip ? &a.dup : nullptr})
      if (skipped) {
        for (float v : *skipped) ASSERT_TRUE(std::isnan(v));
      }
    const Result b = run(fmt(), act, gate, up, dy, gw, uw, &old);
    EXPECT_EQ(0, std::memcmp(a.dgate.data(), b.dgate.data(), a.dgate.size() * sizeof(float)));
    EXPECT_EQ(0, std::memcmp(a.dup.data(), b.dup.data(), a.dup.size() * sizeof(float)));
  }
}

// inf and NaN in gate, up and dy reach exactly the outputs where the double
// reference has them (an inf up at a gate where SiLU is 0 gives NaN, as in
// PyTorch; SiLU(-inf) is NaN).
TEST_P(Glu, InfAndNanWhereTheReferenceHasThem) {
  const float specials[] = {kInf, -kInf, kNan, 0.0f, -0.0f, 1.5f};
  for (Act act : ops::kActivations) {
    SCOPED_TRACE(ops::activation_name(act));
    auto gate = gates(act), up = random_values(n(), -4, 4, fmt()), dy = random_values(n(), -2, 2, fmt());
    for (uint32_t i = 0; i < n(); i += 3) {
      std::vector<float>& target = i % 9 == 0 ? gate : i % 9 == 3 ? up : dy;
      target[i] = specials[(i / 3) % std::size(specials)];
      if (i % 9 != 0 && i % 2 == 0) gate[i] = 0.0f;  // f(0) = 0 for most: inf * 0 products
    }
    expect(act, gate, up, dy, run(fmt(), act, gate, up, dy, GradWrite::Write, GradWrite::Write), GradWrite::Write,
           GradWrite::Write);
  }
}

// <dgate, vg> + <dup, vu> against the central difference of L = sum(r y)
// along (vg, vu), the forward run in fp32.
TEST_P(Glu, BackwardMatchesFiniteDifferences) {
  if (fmt() != Format::F32) GTEST_SKIP() << "the differences are taken in fp32";
  const float h = 1.0f / 128;
  for (Act act : ops::kActivations) {
    SCOPED_TRACE(ops::activation_name(act));
    // Off ReLU's kink, where f is not differentiable.
    std::vector<float> gate = random_values(n(), -3, 3, Format::F32), up = random_values(n(), -2, 2, Format::F32);
    for (float& g : gate)
      if (std::abs(g) < 2 * h) g = 0.5f;
    gate[0] = std::abs(gate[0]);  // one gate where ReLU passes: at n 1 the gradient is not all 0
    const std::vector<float> r = random_values(n(), -1, 1, Format::F32), vg = random_values(n(), -1, 1, Format::F32),
                             vu = random_values(n(), -1, 1, Format::F32);
    auto moved = [&](const std::vector<float>& x, const std::vector<float>& v, float sign) {
      std::vector<float> out(x.size());
      for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] + sign * h * v[i];
      return out;
    };
    double size = 0;
    auto loss = [&](float sign) {
      const std::vector<float> gp = moved(gate, vg, sign), upp = moved(up, vu, sign);
      const Result out = run(Format::F32, act, gp, upp, r, GradWrite::Write, GradWrite::Write);
      double l = 0;
      for (uint32_t i = 0; i < n(); ++i) l += double(r[i]) * out.y[i], size += std::abs(double(r[i]) * out.y[i]);
      return l;
    };
    const double fd = loss(1) - loss(-1);
    const Result at = run(Format::F32, act, gate, up, r, GradWrite::Write, GradWrite::Write);
    const std::vector<float> gp = moved(gate, vg, 1), gm = moved(gate, vg, -1), upp = moved(up, vu, 1),
                             um = moved(up, vu, -1);
    double dot = 0, grad_norm = 0, step_norm = 0;
    for (uint32_t i = 0; i < n(); ++i) {
      const double sg = double(gp[i]) - gm[i], su = double(upp[i]) - um[i];
      dot += at.dgate[i] * sg + at.dup[i] * su;
      grad_norm += double(at.dgate[i]) * at.dgate[i] + double(at.dup[i]) * at.dup[i];
      step_norm += sg * sg + su * su;
    }
    // Against |grad| |step|: the truncation h^2 |f'''| / 6 with |f'''| <= 2
    // for these activations, the forward's roundings (33 fp32 ulps of each
    // y, not cancelling) and the backward's (34 ulps).
    const double scale = std::sqrt(grad_norm * step_norm);
    const double rel = h * h + 33 * 0x1p-24 * size / scale + 34 * 0x1p-24;
    EXPECT_LE(std::abs(dot - fd) / scale, rel) << "<grad, step> " << dot << ", central difference " << fd;
  }
}

INSTANTIATE_TEST_SUITE_P(Shaders, Glu, all_formats_and_sizes(), format_size_name);
// Real MLPs over 33 tokens: Qwen2.5-0.5B's intermediate 4,864 and Llama 3
// 8B's 14,336.
INSTANTIATE_TEST_SUITE_P(RealSize, Glu,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::Values(33u * 4864, 33u * 14336)),
                         format_size_name);

}  // namespace
}  // namespace vkamp::test
