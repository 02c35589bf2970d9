// Small graphs shared by the graph tests, and the whole-graph gradient
// check against central differences of the loss.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "vkamp/graph/graph.hpp"
#include "vkamp/ops/losses.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/train/model.hpp"

namespace vkamp::test {

// x -> fc1 -> relu -> fc2 -> relu -> + x -> head (the residual block keeps
// the width; the head makes `classes` logits). act: the block's activation.
inline graph::Graph residual_mlp(uint32_t width, uint32_t hidden, uint32_t classes,
                                 ops::Activation act = ops::Activation::ReLU) {
  graph::Graph g;
  g.input("x", graph::Shape::vector(width));
  g.param("fc1.weight", {hidden, width});
  g.param("fc1.bias", {hidden}, graph::Init::Zero);
  g.param("fc2.weight", {width, hidden});
  g.param("fc2.bias", {width}, graph::Init::Zero);
  g.param("head.weight", {classes, width});
  g.linear("fc1", "x", "fc1.weight", "fc1.bias");
  g.activation("act1", "fc1", act);
  g.linear("fc2", "act1", "fc2.weight", "fc2.bias");
  g.activation("act2", "fc2", act);
  g.add("residual", "act2", "x");
  g.linear("head", "residual", "head.weight");
  g.set_output("head");
  return g;
}

// d(softmax cross-entropy)/d(parameters) along a random unit direction,
// from the backward and from central differences (fp32).
struct DirectionalDerivative {
  double analytic = 0, numeric = 0;
};

// Below this a directional derivative is too small to tell a right
// gradient from a wrong one against the finite-difference bound.
inline constexpr double kInformativeDerivative = 1e-3;

// step: the finite-difference step h. A deep graph's fp32 loss carries more
// rounding, which divided by h must stay under the bound, so it takes a larger
// step (its h^4 truncation stays far smaller).
inline DirectionalDerivative check_gradients(graph::Graph g, uint32_t rows, uint32_t classes, uint64_t seed,
                                             double step = 1e-2) {
  train::Model model(ctx(), std::move(g), Format::F32, rows, seed, false, false);
  const uint32_t features = model.inputs();
  auto data = data::make_classification(rows, features, classes, seed + 1);
  Buffer x = upload(ctx(), Format::F32, data.x);
  Buffer y(ctx(), rows * 4);
  y.write(data.y);
  Buffer one = upload(ctx(), Format::F32, std::vector<float>{1.0f});
  Buffer row_loss(ctx(), ops::softmax_xent_scratch_bytes(rows)), loss(ctx(), 4);
  auto loss_at = [&](const std::vector<float>& w) {
    model.write_master(w);
    Sequence s(ctx());
    s.begin();
    model.record_forward(s, x, rows);
    ops::softmax_xent_forward(s, Format::F32, model.output(), y, row_loss, loss, rows, classes);
    s.end();
    s.run();
    return double(loss.read<float>()[0]);
  };
  auto w = model.read_master();
  loss_at(w);
  Sequence s(ctx());
  s.begin();
  model.record_forward(s, x, rows);
  ops::softmax_xent_forward(s, Format::F32, model.output(), y, row_loss, loss, rows, classes);  // the count the backward reads
  ops::softmax_xent_backward(s, Format::F32, model.output(), y, one, row_loss, model.doutput(), rows, classes);
  model.record_backward(s, x, rows, false);
  s.end();
  s.run();
  auto grad = download(model.grads(), Format::F32, model.param_elements());
  // A random unit direction along which the derivative is large enough to
  // check: a direction nearly orthogonal to the gradient (about 1 seed in
  // 1000) would make the comparison check nothing, so another is drawn.
  std::normal_distribution<double> nd;
  std::vector<double> v(w.size(), 0.0);
  DirectionalDerivative d;
  for (int attempt = 0; attempt < 16 && std::abs(d.analytic) <= kInformativeDerivative; ++attempt) {
    double norm = 0;
    for (auto& t : model.tensors())
      for (uint32_t i = t.offset; i < t.offset + t.size; ++i) {
        v[i] = nd(rng());
        norm += v[i] * v[i];
      }
    d.analytic = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      v[i] /= std::sqrt(norm);
      d.analytic += v[i] * grad[i];
    }
  }
  auto central = [&](double h) {
    std::vector<float> wp(w), wm(w);
    for (size_t i = 0; i < w.size(); ++i) {
      wp[i] = float(w[i] + h * v[i]);
      wm[i] = float(w[i] - h * v[i]);
    }
    return (loss_at(wp) - loss_at(wm)) / (2 * h);
  };
  // Richardson's step: central differences at h and h/2 combined so that
  // their h^2 truncation terms cancel. A LayerNorm over few features has
  // large third derivatives, and the h^2 term alone exceeded the bound.
  const double h = step;
  d.numeric = (4 * central(h / 2) - central(h)) / 3;
  return d;
}

// As in test_trainer.cpp's whole-model check: truncation (here h^4, after
// Richardson's step) plus fp32 loss rounding over 2h, about 3x that after the
// step; a wrong gradient (a
// missing use of a tied weight, a fan-out gradient overwritten instead of
// summed) is off by far more.
inline void expect_gradients_match(const DirectionalDerivative& d) {
  EXPECT_NEAR(d.numeric, d.analytic, 1e-4 + 1e-3 * std::abs(d.analytic));
  EXPECT_GT(std::abs(d.analytic), kInformativeDerivative) << "a vanishing derivative would check nothing";
}

// Every pair of planned buffers alive at a common time has disjoint bytes.
inline void expect_no_live_overlap(const std::vector<graph::Executor::Placement>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    for (size_t j = i + 1; j < p.size(); ++j) {
      if (p[i].workspace != p[j].workspace) continue;
      bool same_time = p[i].first <= p[j].last && p[j].first <= p[i].last;
      bool same_bytes = p[i].offset < p[j].offset + p[j].bytes && p[j].offset < p[i].offset + p[i].bytes;
      EXPECT_FALSE(same_time && same_bytes) << "buffers " << i << " and " << j << " overlap while both live";
    }
}

}  // namespace vkamp::test
