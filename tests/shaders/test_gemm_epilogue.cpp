// The GEMM's fused epilogue (ops::GemmEpilogue), at every shape and format
// of test_gemm.cpp, split over k or not, against references in double from
// the definitions (support/reference.hpp, with their values at +-inf):
//  - a linear layer's forward: Y = f(Z), Z = X W^T + b, Z kept when asked;
//  - the backward form: dZ = dY f'(z), dY = dZ' W (linear_backward_input's
//    product), the activation's backward in the GEMM that computes dY.
#include <cmath>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "shaders/gemm_reference.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

class GemmEpilogue : public GpuTestP<FormatShape> {};

// The fused epilogue of a linear layer's forward: Y = f(Z), Z = X W^T + b,
// one GEMM. References in double from the definitions
// (support/reference.hpp, with their values at +-inf).
using ops::Activation;
double act_ref(std::optional<Activation> act, double z) { return act ? activation_reference(*act, z) : z; }
double act_grad_ref(std::optional<Activation> act, double z) { return act ? activation_grad_reference(*act, z) : 1; }

struct EpilogueCase {
  bool bias;
  std::optional<Activation> act;
  bool keep_z;
};
// The cases at shape `s` (its index in kShapes): no activation, ReLU (its
// NaN select), and two of the other activations of ops::kActivations in
// turn, the second with a bias, keeping Z as their backward needs. Every
// activation runs at several shapes in every format, while each shape
// compiles four pipelines however long the list grows (BIAS and ACT are
// specialization constants; keep_z is a push constant): lavapipe takes
// minutes to compile those of the 16 x 8 blocks at 127 x 127.
std::vector<EpilogueCase> epilogues_at(const Shape& s) {
  size_t at = 0;
  while (at < std::size(kShapes) && !(kShapes[at].m == s.m && kShapes[at].n == s.n && kShapes[at].k == s.k)) ++at;
  std::vector<Activation> others;
  for (Activation act : ops::kActivations)
    if (act != Activation::ReLU) others.push_back(act);
  std::vector<EpilogueCase> cases = {{true, std::nullopt, false}, {true, Activation::ReLU, false}};
  for (size_t i : {2 * at, 2 * at + 1}) {
    Activation act = others[i % others.size()];
    cases.push_back({i % 2 == 1, act, ops::backward_needs_input(act)});
  }
  return cases;
}

std::string epilogue_name(const EpilogueCase& e) {
  return std::string(e.bias ? "bias" : "nobias") + "_" + (e.act ? ops::activation_name(*e.act) : "identity");
}

// One fused forward: y (and z when kept) for x {batch, in}, w {out, in}, b {out}.
struct EpilogueRun {
  std::vector<float> y, z;
};
EpilogueRun run_epilogue(Format fmt, const EpilogueCase& e, const std::vector<float>& x, const std::vector<float>& w,
                         const std::vector<float>& b, uint32_t batch, uint32_t in, uint32_t out) {
  Buffer bx = guarded_input(fmt, x), bw = guarded_input(fmt, w), bb = guarded_input(fmt, b);
  Buffer by = guarded_output(fmt, size_t(batch) * out), bz = guarded_output(fmt, size_t(batch) * out);
  ops::GemmEpilogue epi;
  if (e.bias) epi.bias = BufferView(bb);
  epi.act = e.act;
  if (e.keep_z) epi.z = BufferView(bz);
  run_once([&](Sequence& seq) { ops::linear_forward(seq, fmt, bx, bw, by, batch, in, out, epi); });
  EpilogueRun r{guarded_result(by, fmt, size_t(batch) * out), {}};
  if (e.keep_z) r.z = guarded_result(bz, fmt, size_t(batch) * out);
  return r;
}

// z = x w^T + b in double, per output.
std::vector<double> ref_preact(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
                               bool bias, uint32_t batch, uint32_t in, uint32_t out) {
  std::vector<double> z = ref_forward(x, w, batch, in, out);
  if (bias)
    for (size_t i = 0; i < z.size(); ++i) z[i] += b[i % out];
  return z;
}

// The error bound of y = f(round(z~)), z~ = p~ + b, p~ the fp32 sum of the
// in products (p exactly), in the NMSE terms of gemm_bound. p~ errs by
// about sqrt(in) fp32 roundings of p (gemm_bound's model), adding the bias
// by one fp32 rounding of z, and z~'s rounding to the format by one more
// of z. Relative to z, p's error grows by |p| / |z|: the bias can cancel p
// (a single product and a bias, at m = n = k = 1, can land far below
// both). An error d z_i reaches y_i as f'(z_i) d z_i, so over all outputs
// a relative error of size e in v (v = p or z) grows into Y by
// A_v = sqrt(sum (v f'(z))^2 / sum f(z)^2); for v = z that is at most 1
// for ReLU and tanh (z sech^2 z <= tanh z), above 1 for GELU only where
// z < 0, which the sums weigh against the positive outputs. Then y is
// rounded once more, after f's own fp32 error (32 fp32 ulps;
// test_activation.cpp). Without f (z itself), A_v = sqrt(sum v^2 / sum z^2).
double epilogue_bound(Format fmt, const std::vector<double>& z, const std::vector<double>& p,
                      std::optional<Activation> act, uint32_t in) {
  double num_z = 0, num_p = 0, den = 0;
  for (size_t i = 0; i < z.size(); ++i) {
    if (!std::isfinite(z[i])) continue;
    double g = act_grad_ref(act, z[i]), y = act_ref(act, z[i]);
    num_z += z[i] * g * z[i] * g;
    num_p += p[i] * g * p[i] * g;
    den += y * y;
  }
  double growth_z = den > 0 ? std::max(1.0, std::sqrt(num_z / den)) : 1.0;
  double growth_p = den > 0 ? std::max(1.0, std::sqrt(num_p / den)) : 1.0;
  const double fp32_ulp = unit_roundoff(Format::F32) / unit_roundoff(fmt);  // in the format's ulps
  double ulps = growth_z * (1 + fp32_ulp) + growth_p * std::sqrt(double(in)) * fp32_ulp;
  double f_ulps = act ? 1 + 32 * fp32_ulp : 0;
  return nmse_bound(fmt, ulps + f_ulps);
}

TEST_P(GemmEpilogue, FusedEpilogueMatchesTheReference) {
  auto [fmt, s] = GetParam();
  uint32_t batch = s.m, out = s.n, in = s.k;
  for (const EpilogueCase& e : epilogues_at(s)) {
    SCOPED_TRACE(epilogue_name(e));
    auto x = random_values(size_t(batch) * in, -1, 1, fmt);
    auto w = random_values(size_t(out) * in, -1, 1, fmt);
    auto b = random_values(out, -1, 1, fmt);
    EpilogueRun r = run_epilogue(fmt, e, x, w, b, batch, in, out);
    std::vector<double> z = ref_preact(x, w, b, e.bias, batch, in, out), y(z.size());
    const std::vector<double> p = ref_forward(x, w, batch, in, out);  // the products' sums, before the bias
    for (size_t i = 0; i < z.size(); ++i) y[i] = act_ref(e.act, z[i]);
    EXPECT_TRUE(close_to(r.y, y, epilogue_bound(fmt, z, p, e.act, in))) << "y";
    if (e.keep_z) {
      EXPECT_TRUE(close_to(r.z, z, epilogue_bound(fmt, z, p, std::nullopt, in)))
          << "z: the sum and the bias, rounded once";
    }
  }
}

// A NaN in X's row r reaches exactly row r of Y and Z; an inf in W's row o
// makes column o of Z +-inf, and of Y f(+-inf) (0 for ReLU and GELU at
// -inf, +-1 for tanh; support/reference.hpp): close_to checks every inf and
// NaN position.
TEST_P(GemmEpilogue, FusedEpilogueKeepsNanToItsRow) {
  auto [fmt, s] = GetParam();
  uint32_t batch = s.m, out = s.n, in = s.k;
  auto pick = [&](size_t n) { return uint32_t(std::uniform_int_distribution<size_t>(0, n - 1)(rng())); };
  for (const EpilogueCase& e : epilogues_at(s)) {
    SCOPED_TRACE(epilogue_name(e));
    auto x = random_values(size_t(batch) * in, -1, 1, fmt);
    auto w = random_values(size_t(out) * in, -1, 1, fmt);
    auto b = random_values(out, -1, 1, fmt);
    uint32_t nan_row = pick(batch);
    x[size_t(nan_row) * in + pick(in)] = kNan;
    if (out > 1) w[size_t(pick(out)) * in + pick(in)] = kInf;
    EpilogueRun r = run_epilogue(fmt, e, x, w, b, batch, in, out);
    std::vector<double> z = ref_preact(x, w, b, e.bias, batch, in, out), y(z.size());
    const std::vector<double> p = ref_forward(x, w, batch, in, out);  // the products' sums, before the bias
    for (size_t i = 0; i < z.size(); ++i) y[i] = act_ref(e.act, z[i]);
    for (uint32_t i = 0; i < batch; ++i)
      for (uint32_t j = 0; j < out; ++j)
        ASSERT_EQ(std::isnan(r.y[size_t(i) * out + j]), i == nan_row || std::isnan(y[size_t(i) * out + j]))
            << "row " << i << " column " << j;
    EXPECT_TRUE(close_to(r.y, y, epilogue_bound(fmt, z, p, e.act, in))) << "y";
    if (e.keep_z) {
      EXPECT_TRUE(close_to(r.z, z, epilogue_bound(fmt, z, p, std::nullopt, in))) << "z";
    }
  }
}

// The backward form at shape s (m, n, k = batch, in, out): dZ = dY f'(z)
// for dY = dZ' W, dZ' {batch, out} the upstream gradient, W {out, in}, z
// {batch, in} the kept pre-activation, kept 0.1 away from f''s cancelling
// root as test_activation.cpp keeps x.
struct BackwardCase {
  std::vector<float> dzn, w, z;
};
BackwardCase backward_case(Format fmt, Activation act, uint32_t batch, uint32_t in, uint32_t out) {
  BackwardCase c{random_values(size_t(batch) * out, -1, 1, fmt), random_values(size_t(out) * in, -1, 1, fmt),
                 random_values(size_t(batch) * in, -3, 3, fmt)};
  for (float& v : c.z)
    while (std::abs(v - cancelling_root(act)) < 0.1) v = random_values(1, -3, 3, fmt)[0];
  return c;
}

std::vector<float> run_backward(Format fmt, Activation act, const BackwardCase& c, uint32_t batch, uint32_t in,
                                uint32_t out) {
  Buffer bd = guarded_input(fmt, c.dzn), bw = guarded_input(fmt, c.w), bz = guarded_input(fmt, c.z);
  Buffer bx = guarded_output(fmt, size_t(batch) * in);
  const ops::GemmEpilogue epi{.act = act, .z = BufferView(bz), .act_grad = true};
  run_once([&](Sequence& seq) { ops::linear_backward_input(seq, fmt, bd, bw, bx, batch, in, out, false, epi); });
  return guarded_result(bx, fmt, size_t(batch) * in);
}

// dY in double, and dZ = dY f'(z).
struct BackwardReference {
  std::vector<double> dy, dz;
};
BackwardReference backward_reference(Activation act, const BackwardCase& c, uint32_t batch, uint32_t in,
                                     uint32_t out) {
  BackwardReference r{ref_backward_input(c.dzn, c.w, batch, in, out), {}};
  r.dz.resize(r.dy.size());
  for (size_t i = 0; i < r.dy.size(); ++i) r.dz[i] = r.dy[i] * activation_grad_reference(act, c.z[i]);
  return r;
}

// dZ~ = round(round(dY~) f'~(z)). dY~ errs as one GEMM (gemm_bound: its
// rounding to the format and sqrt(out) fp32 roundings); that error reaches
// dZ times f'(z), which over all outputs grows the NMSE's root by at most
// G = max |f'| sqrt(sum dY^2 / sum dZ^2) (>= 1, as dZ = f' dY). f'~ errs
// by up to 32 fp32 ulps relative (test_activation.cpp's bound, z away from
// the cancelling root), and dZ~ is rounded once more.
double backward_bound(Format fmt, Activation act, const BackwardCase& c, const BackwardReference& r, uint32_t out) {
  double max_grad = 0, dy2 = 0, dz2 = 0;
  for (size_t i = 0; i < r.dy.size(); ++i) {
    if (!std::isfinite(r.dz[i])) continue;
    max_grad = std::max(max_grad, std::abs(activation_grad_reference(act, c.z[i])));
    dy2 += r.dy[i] * r.dy[i];
    dz2 += r.dz[i] * r.dz[i];
  }
  const double growth = dz2 > 0 ? std::max(1.0, max_grad * std::sqrt(dy2 / dz2)) : 1.0;
  const double fp32_ulp = unit_roundoff(Format::F32) / unit_roundoff(fmt);  // in the format's ulps
  return nmse_bound(fmt, growth * (1 + std::sqrt(double(out)) * fp32_ulp) + 32 * fp32_ulp + 1);
}

// Each activation of epilogues_at() whose backward reads z, against the
// reference; a result below the normal range errs by up to the format's
// subnormal spacing (or all of it where the driver flushes).
TEST_P(GemmEpilogue, ActivationBackwardMatchesTheReference) {
  auto [fmt, s] = GetParam();
  const uint32_t batch = s.m, in = s.n, out = s.k;
  for (const EpilogueCase& e : epilogues_at(s)) {
    if (!e.keep_z) continue;
    SCOPED_TRACE(ops::activation_name(*e.act));
    const BackwardCase c = backward_case(fmt, *e.act, batch, in, out);
    const BackwardReference r = backward_reference(*e.act, c, batch, in, out);
    EXPECT_TRUE(close_to(run_backward(fmt, *e.act, c, batch, in, out), r.dz,
                         backward_bound(fmt, *e.act, c, r, out), smallest_normal(fmt)));
  }
}

// A NaN in the upstream gradient's row r makes exactly row r of dZ NaN.
TEST_P(GemmEpilogue, ActivationBackwardKeepsNanToItsRow) {
  auto [fmt, s] = GetParam();
  const uint32_t batch = s.m, in = s.n, out = s.k;
  auto pick = [&](size_t n) { return uint32_t(std::uniform_int_distribution<size_t>(0, n - 1)(rng())); };
  for (const EpilogueCase& e : epilogues_at(s)) {
    if (!e.keep_z) continue;
    SCOPED_TRACE(ops::activation_name(*e.act));
    BackwardCase c = backward_case(fmt, *e.act, batch, in, out);
    const uint32_t nan_row = pick(batch);
    c.dzn[size_t(nan_row) * out + pick(out)] = kNan;
    const std::vector<float> dz = run_backward(fmt, *e.act, c, batch, in, out);
    for (uint32_t i = 0; i < batch; ++i)
      for (uint32_t j = 0; j < in; ++j)
        ASSERT_EQ(std::isnan(dz[size_t(i) * in + j]), i == nan_row) << "row " << i << " column " << j;
  }
}

INSTANTIATE_TEST_SUITE_P(Shaders, GemmEpilogue,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::ValuesIn(kShapes)),
                         format_shape_name);

}  // namespace
}  // namespace vkamp::test
