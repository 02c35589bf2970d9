// Error bounds for AdamW's update after a few steps, given a bound on the
// gradients' NMSE (shared by the golden tests). Derivations in the comments.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace vkamp::test {

// An NMSE bound for the whole update w_steps - w0 (ref_delta: PyTorch's).
// AdamW moves each weight by lr m/sqrt(v) per step (|m/sqrt(v)| <= 1 at
// these few steps; exactly sign(g) at the first), so a gradient's relative
// error e_i = |dg_i| / |g_i| moves the update by at most 2 lr min(e_i, 1)
// per step, whatever |g_i|: small gradients are the sensitive ones. The
// gradient bound allows a total sum dg_i^2 = grad_bound |g|^2; the worst
// place for it is the smallest |g_i|. Spending it there, smallest first
// (a fractional knapsack), bounds sum (update error)^2 by (2 lr steps)^2
// times the count covered. Gradients that are exactly 0 are left out:
// both sides compute them as 0 x something, exactly 0, so Adam moves them
// by the decay alone.
inline double adamw_update_bound(const std::vector<double>& grad0, double grad_bound, double lr, double steps,
                                 const std::vector<double>& ref_delta) {
  std::vector<double> g2;
  double norm2 = 0;
  for (double v : grad0) {
    norm2 += v * v;
    if (v != 0) g2.push_back(v * v);
  }
  std::sort(g2.begin(), g2.end());
  double budget = grad_bound * norm2, covered = 0;
  for (double v : g2) {
    if (v > budget) {
      covered += budget / v;
      break;
    }
    budget -= v;
    covered += 1;
  }
  double ref2 = 0;
  for (double d : ref_delta) ref2 += d * d;
  return covered * std::pow(2 * lr * steps, 2) / ref2;
}

// The elements whose gradient is well resolved, and the NMSE bound of their
// update. The bound above must allow sign flips of the smallest gradients,
// so it is loose (order 1 in fp16). Where a gradient is well resolved,
// AdamW's update is tight: with |g_i| >= T each update errs by at most
// 2 lr steps e_i, e_i = |dg_i| / T, so the errors' squares sum to at most
// (2 lr steps)^2 sum dg_i^2 / T^2 <= (2 lr steps)^2 grad_bound |g|^2 / T^2.
// T^2 = 1000 grad_bound |g|^2 / n makes that (2 lr steps)^2 n / 1000: a
// small fraction of the resolved updates' own sum of squares, about
// (lr steps)^2 per element.
struct Resolved {
  std::vector<size_t> index;  // into the flat gradient
  double bound = 0;           // without the master-weight rounding term
};
inline Resolved adamw_resolved(const std::vector<double>& grad0, double grad_bound, double lr, double steps,
                               const std::vector<double>& ref_delta) {
  double norm2 = 0;
  for (double v : grad0) norm2 += v * v;
  const double t2 = 1000 * grad_bound * norm2 / double(grad0.size());
  Resolved r;
  double ref2 = 0;
  for (size_t i = 0; i < grad0.size(); ++i)
    if (grad0[i] * grad0[i] >= t2) {
      r.index.push_back(i);
      ref2 += ref_delta[i] * ref_delta[i];
    }
  r.bound = std::pow(2 * lr * steps, 2) * double(grad0.size()) / 1000 / ref2;
  return r;
}

}  // namespace vkamp::test
