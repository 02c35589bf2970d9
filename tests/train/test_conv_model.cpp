// Convolutional models on the GPU: the forward of conv/pool/flatten/linear
// nets against a double-precision CPU reference built from the model's
// master weights, every parameter gradient against central differences of
// that reference's loss, and a tiny conv net that learns (fp32 and fp16
// with dynamic loss scaling), with its per-tensor histograms named.
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "vkamp/ops/losses.hpp"

#include "vkamp/train/model.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

using models::LayerKind;
using models::ModelSpec;
using graph::Shape;

// ---- The CPU reference, in double, from the definitions (NHWC) ----------

// One layer's parameters as the reference reads them.
struct RefParams {
  std::vector<double> w, b;
};

// y = model(x) for `rows` examples; params per layer (empty for pools and
// flatten). Max pooling takes the first maximal element.
//
// *kink_gap, when given, receives how close the forward came to a point
// where the network is not differentiable, relative to the values there:
// the smallest gap between a max-pool window's largest and second-largest
// value over |largest| (windows of ReLU zeros excepted: they pass no
// gradient whichever element they pick), and the smallest |z| of a ReLU
// input z = sum + bias over |sum| + |bias| (the GPU rounds the sum to the
// format, then adds the bias).
std::vector<double> reference_forward(const ModelSpec& spec, const std::vector<RefParams>& params,
                                      std::vector<double> x, uint32_t rows, double* kink_gap = nullptr) {
  auto shapes = models::layer_shapes(spec);
  if (kink_gap) *kink_gap = INFINITY;
  auto near_kink = [&](double gap) {
    if (kink_gap) *kink_gap = std::min(*kink_gap, gap);
  };
  for (size_t l = 0; l < spec.layers.size(); ++l) {
    const models::LayerSpec& L = spec.layers[l];
    const Shape &in = shapes[l], &out = shapes[l + 1];
    std::vector<double> y(size_t(rows) * out.elements(), 0.0);
    auto at = [&](uint32_t n, uint32_t h, uint32_t w, uint32_t c) {
      return x[((size_t(n) * in.h + h) * in.w + w) * in.c + c];
    };
    for (uint32_t n = 0; n < rows; ++n)
      for (uint32_t oy = 0; oy < out.h; ++oy)
        for (uint32_t ox = 0; ox < out.w; ++ox)
          for (uint32_t oc = 0; oc < out.c; ++oc) {
            double v = 0, bias = 0;  // v: the sum of products, then the output
            switch (L.kind) {
              case LayerKind::Linear:
                bias = params[l].b[oc];
                for (uint32_t i = 0; i < in.elements(); ++i)
                  v += x[size_t(n) * in.elements() + i] * params[l].w[size_t(oc) * in.elements() + i];
                break;
              case LayerKind::Conv2d:
                bias = params[l].b[oc];
                for (uint32_t ky = 0; ky < L.kernel; ++ky)
                  for (uint32_t kx = 0; kx < L.kernel; ++kx) {
                    int64_t iy = int64_t(oy) * L.stride + ky - L.pad, ix = int64_t(ox) * L.stride + kx - L.pad;
                    if (iy < 0 || ix < 0 || iy >= in.h || ix >= in.w) continue;  // zero padding
                    for (uint32_t c = 0; c < in.c; ++c)
                      v += at(n, uint32_t(iy), uint32_t(ix), c) *
                           params[l].w[((size_t(oc) * L.kernel + ky) * L.kernel + kx) * in.c + c];
                  }
                break;
              case LayerKind::MaxPool:
              case LayerKind::AvgPool: {
                bool max = L.kind == LayerKind::MaxPool;
                double second = -INFINITY;
                v = max ? -INFINITY : 0.0;
                for (uint32_t ky = 0; ky < L.kernel; ++ky)
                  for (uint32_t kx = 0; kx < L.kernel; ++kx) {
                    double e = at(n, oy * L.stride + ky, ox * L.stride + kx, oc);
                    if (!max) v += e;
                    else if (e > v) second = v, v = e;
                    else second = std::max(second, e);
                  }
                if (!max) v /= double(L.kernel) * L.kernel;
                else if (v != 0 && L.kernel > 1) near_kink((v - second) / std::abs(v));
                break;
              }
              case LayerKind::Flatten: v = x[size_t(n) * out.elements() + oc]; break;  // (h, w, c) order
              case LayerKind::BatchNorm:
              case LayerKind::Dropout: ADD_FAILURE() << "no reference here for this layer kind"; break;
            }
            if (L.has_params()) {
              double scale = std::abs(v) + std::abs(bias);
              v += bias;
              if (L.activate && L.act == ops::Activation::ReLU && scale > 0) near_kink(std::abs(v) / scale);
            }
            if (L.activate) v = activation_reference(L.act, v);
            y[((size_t(n) * out.h + oy) * out.w + ox) * out.c + oc] = v;
          }
    x = std::move(y);
  }
  return x;
}

// Mean softmax cross-entropy.
double reference_loss(const std::vector<double>& logits, const std::vector<uint32_t>& labels, uint32_t classes) {
  double total = 0;
  for (size_t r = 0; r < labels.size(); ++r) {
    const double* z = &logits[r * classes];
    double m = *std::max_element(z, z + classes), s = 0;
    for (uint32_t c = 0; c < classes; ++c) s += std::exp(z[c] - m);
    total += m + std::log(s) - z[labels[r]];
  }
  return total / double(labels.size());
}

// The model's parameters (its flat master layout) split per layer.
std::vector<RefParams> split(const train::Model& m, const std::vector<double>& flat) {
  std::vector<RefParams> p(m.spec().layers.size());
  size_t t = 0;
  for (size_t l = 0; l < p.size(); ++l) {
    if (!m.spec().layers[l].has_params()) continue;
    const auto& w = m.tensors()[t++];
    const auto& b = m.tensors()[t++];
    p[l].w.assign(flat.begin() + w.offset, flat.begin() + w.offset + w.size);
    p[l].b.assign(flat.begin() + b.offset, flat.begin() + b.offset + b.size);
  }
  return p;
}

// ---- Fixtures -------------------------------------------------------------

// A conv with stride and padding, ReLU, an overlapping max pool, flatten, tanh.
const char* kStridedNet = "10x9x3-c6k3p1s2r-m2s1-f-5t-4";
// Two convs (so the second sends dx back through col2im), tanh, average
// pooling, a padded 2x2 conv with GELU, flatten.
const char* kTwoConvNet = "8x8x2-c4k3t-a2-c3k2p1g-f-4";
const char* kLeNet5 = "28x28x1-c6k5p2r-m2-c16k5r-m2-f-120r-84r-10";
// Pooling before the first layer with parameters: nothing flows back to it.
const char* kPoolFirstNet = "6x6x2-a2-f-4r-3";

struct Net {
  std::unique_ptr<train::Model> model;
  std::vector<float> master;  // what the GPU's working copy is rounded from
  std::vector<float> x;       // rows x inputs, rounded to the format
  std::vector<uint32_t> labels;
};

// The weights as the GPU's working copy holds them, in double.
std::vector<double> working_weights(const Net& n, Format fmt) {
  std::vector<double> w(n.master.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = round_to(fmt, n.master[i]);
  return w;
}

// A model with random (non-zero) biases too, and inputs in [0, 1). For
// gradient checks (untied = true) the inputs are drawn again until the
// forward stays clear of the kinks of max pooling and ReLU: within a few
// ulps of one (a near-tie in a window, a ReLU input near 0) the GPU's
// rounding may rightly take the other side, and a finite difference
// straddles it.
Net make_net(const char* spec_text, Format fmt, uint32_t rows, uint32_t max_rows, bool untied = false) {
  Net n;
  ModelSpec spec = models::parse_model(spec_text);
  n.model = std::make_unique<train::Model>(ctx(), spec, fmt, max_rows, rng()(), false, false);
  n.master = n.model->read_master();
  std::uniform_real_distribution<float> bias(-0.2f, 0.2f);
  for (size_t t = 1; t < n.model->tensors().size(); t += 2) {
    const auto& b = n.model->tensors()[t];
    for (uint32_t i = 0; i < b.size; ++i) n.master[b.offset + i] = bias(rng());
  }
  n.model->write_master(n.master);
  auto params = split(*n.model, working_weights(n, fmt));
  for (int attempt = 0;; ++attempt) {
    n.x = random_values(size_t(rows) * spec.inputs(), 0.0f, 1.0f, fmt);
    double gap = INFINITY;
    if (untied) reference_forward(spec, params, to_double(n.x), rows, &gap);
    if (!untied || gap > std::ldexp(1.0, -8)) break;
    if (attempt == 1000) throw std::runtime_error("no input keeps clear of the max-pool and ReLU kinks");
  }
  std::uniform_int_distribution<uint32_t> label(0, n.model->outputs() - 1);
  for (uint32_t r = 0; r < rows; ++r) n.labels.push_back(label(rng()));
  return n;
}

struct Case {
  const char* net;
  Format fmt;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.net << " " << format_name(c.fmt); }

std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  std::string s = i.param.net == kStridedNet    ? "strided"
                  : i.param.net == kTwoConvNet  ? "two_conv"
                  : i.param.net == kPoolFirstNet ? "pool_first"
                                                 : "lenet5";
  return s + "_" + format_name(i.param.fmt);
}

// ---- Forward --------------------------------------------------------------

class ConvModelForward : public GpuTestP<Case> {};

TEST_P(ConvModelForward, MatchesTheDoubleReference) {
  const Case c = GetParam();
  const uint32_t rows = 3, max_rows = 4;  // fewer rows than the buffers hold
  Net n = make_net(c.net, c.fmt, rows, max_rows);
  Buffer x = upload(ctx(), c.fmt, n.x);
  n.model->output().fill(kPoison);
  Sequence s(ctx());
  s.begin();
  n.model->record_forward(s, x, rows);
  s.end();
  s.run();
  auto out = download(n.model->output(), c.fmt, size_t(rows) * n.model->outputs());
  auto ref = reference_forward(n.model->spec(), split(*n.model, working_weights(n, c.fmt)), to_double(n.x), rows);
  // Each layer rounds its output to the format, and fp32 sums in another
  // order than double: a few roundings' worth (measured: NMSE about 1e-13
  // in fp32 and 1e-6 in fp16, 20 and 80 times below these bounds).
  EXPECT_TRUE(close_to(out, ref, nmse_bound(c.fmt, c.fmt == Format::F32 ? 16 : 8)));
}

INSTANTIATE_TEST_SUITE_P(Nets, ConvModelForward,
                         ::testing::Values(Case{kStridedNet, Format::F32}, Case{kStridedNet, Format::F16},
                                           Case{kTwoConvNet, Format::F32}, Case{kTwoConvNet, Format::F16},
                                           Case{kPoolFirstNet, Format::F32}, Case{kPoolFirstNet, Format::F16},
                                           Case{kLeNet5, Format::F32}, Case{kLeNet5, Format::F16}),
                         case_name);

// ---- Gradients --------------------------------------------------------------

class ConvModelGradients : public GpuTestP<Case> {};

// Every parameter's gradient of the mean cross-entropy, against central
// differences of the double reference (h = 1e-6 in double: truncation and
// rounding far below the fp32 and fp16 errors being measured). Backward is
// recorded twice, the second time accumulating, so the accumulate path of
// every op is checked as well: the result must be twice the gradient.
TEST_P(ConvModelGradients, MatchTheReferenceAndAccumulate) {
  const Case c = GetParam();
  const uint32_t rows = 3;
  Net n = make_net(c.net, c.fmt, rows, rows, /*untied=*/true);
  train::Model& m = *n.model;
  const uint32_t classes = m.outputs();
  // A loss scale, as in training; fp16 gradients are read back divided by it.
  const float scale = c.fmt == Format::F32 ? 1.0f : 256.0f;
  Buffer x = upload(ctx(), c.fmt, n.x);
  Buffer y(ctx(), rows * 4);
  y.write(n.labels);
  Buffer s_buf = upload(ctx(), Format::F32, std::vector<float>{scale});
  Buffer row_loss(ctx(), ops::softmax_xent_scratch_bytes(rows)), loss(ctx(), 4);

  std::map<bool, std::vector<float>> grads;
  for (bool twice : {false, true}) {
    m.grads().fill(kPoison);  // an element backward does not write stays NaN
    Sequence s(ctx());
    s.begin();
    for (int pass = 0; pass < (twice ? 2 : 1); ++pass) {
      m.record_forward(s, x, rows);
      ops::softmax_xent_forward(s, c.fmt, m.output(), y, row_loss, loss, rows, classes);
      ops::softmax_xent_backward(s, c.fmt, m.output(), y, s_buf, row_loss, m.doutput(), rows, classes);
      m.record_backward(s, x, rows, /*accumulate=*/pass > 0);
    }
    s.end();
    s.run();
    grads[twice] = download(m.grads(), c.fmt, m.param_elements());
  }

  std::vector<double> w = working_weights(n, c.fmt);
  std::vector<double> xd = to_double(n.x);
  auto loss_at = [&](const std::vector<double>& p) {
    return reference_loss(reference_forward(m.spec(), split(m, p), xd, rows), n.labels, classes);
  };
  const double h = 1e-6;
  std::vector<double> ref_all;
  std::vector<float> got_all, got2_all;
  // fp16 gradients pass through several fp16 roundings (activations, dY,
  // dcol) on the way; fp32 accumulates in a different order than double.
  // Over all parameters the measured NMSE is below 1e-12 (fp32) and 2e-6
  // (fp16); a wrong index or a lost term gives about 1. A single tensor can
  // be a few bias gradients that nearly cancel, whose relative error is
  // larger: those get a looser bound, still far below a real mistake.
  const double bound = nmse_bound(c.fmt, c.fmt == Format::F32 ? 16 : 4);
  const double tensor_bound = nmse_bound(c.fmt, 64);
  for (const auto& t : m.tensors()) {
    std::vector<double> ref(t.size);
    std::vector<float> got(t.size), got2(t.size);
    for (uint32_t i = 0; i < t.size; ++i) {
      std::vector<double> wp(w), wm(w);
      wp[t.offset + i] += h;
      wm[t.offset + i] -= h;
      ref[i] = (loss_at(wp) - loss_at(wm)) / (2 * h);
      got[i] = grads[false][t.offset + i] / scale;
      got2[i] = grads[true][t.offset + i] / (2 * scale);
    }
    EXPECT_TRUE(close_to(got, ref, tensor_bound)) << t.name;
    EXPECT_TRUE(close_to(got2, ref, tensor_bound)) << t.name << ", accumulated over two backward passes";
    ref_all.insert(ref_all.end(), ref.begin(), ref.end());
    got_all.insert(got_all.end(), got.begin(), got.end());
    got2_all.insert(got2_all.end(), got2.begin(), got2.end());
  }
  EXPECT_TRUE(close_to(got_all, ref_all, bound)) << "all parameters";
  EXPECT_TRUE(close_to(got2_all, ref_all, bound)) << "all parameters, accumulated over two backward passes";
}

INSTANTIATE_TEST_SUITE_P(Nets, ConvModelGradients,
                         ::testing::Values(Case{kStridedNet, Format::F32}, Case{kStridedNet, Format::F16},
                                           Case{kTwoConvNet, Format::F32}, Case{kTwoConvNet, Format::F16},
                                           Case{kPoolFirstNet, Format::F32}, Case{kPoolFirstNet, Format::F16}),
                         case_name);

// ---- Layout and training --------------------------------------------------------

class ConvModel : public GpuTest {};

TEST_F(ConvModel, TensorsAreNamedPerKindAndSizedFromTheShapes) {
  train::Model m(ctx(), models::parse_model(kLeNet5), Format::F16, 8, 1, true, false);
  std::vector<std::pair<std::string, uint32_t>> want = {
      {"conv1.weight", 6 * 5 * 5 * 1}, {"conv1.bias", 6},  {"conv2.weight", 16 * 5 * 5 * 6}, {"conv2.bias", 16},
      {"fc1.weight", 120 * 400},       {"fc1.bias", 120},  {"fc2.weight", 84 * 120},         {"fc2.bias", 84},
      {"fc3.weight", 10 * 84},         {"fc3.bias", 10}};
  ASSERT_EQ(m.tensors().size(), want.size());
  uint64_t total = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(m.tensors()[i].name, want[i].first);
    EXPECT_EQ(m.tensors()[i].size, want[i].second) << want[i].first;
    EXPECT_EQ(m.tensors()[i].offset % train::Model::kParamAlign, 0u);
    total += want[i].second;
  }
  EXPECT_EQ(m.param_count(), total);
  EXPECT_EQ(total, 61706u) << "LeNet-5 for 28x28 inputs with padding 2 has 61,706 parameters";
  EXPECT_EQ(m.outputs(), 10u);
  // Kaiming-uniform: conv1's fan-in is 5 * 5 * 1, so |w| <= sqrt(6 / 25).
  auto w = m.read_master();
  const auto& c1 = m.tensors()[0];
  float mx = 0;
  for (uint32_t i = 0; i < c1.size; ++i) mx = std::max(mx, std::abs(w[c1.offset + i]));
  EXPECT_LE(mx, std::sqrt(6.0f / 25.0f));
  EXPECT_GT(mx, 0.8f * std::sqrt(6.0f / 25.0f));
}

// 8x8 images of a short bar on noise: horizontal, vertical or diagonal (the
// label), somewhere in the image. Local patterns, which convolutions find.
data::HostData bar_images(uint32_t count, uint64_t seed) {
  data::HostData d;
  d.count = count;
  d.features = 64;
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> noise(0.0f, 0.3f);
  std::uniform_int_distribution<int> pos(0, 4);
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t label = i % 3;
    std::vector<float> img(64);
    for (float& v : img) v = noise(gen);
    int y = pos(gen), x = pos(gen);
    for (int k = 0; k < 4; ++k) {
      int yy = label == 0 ? y : y + k, xx = label == 1 ? x : x + k;
      img[yy * 8 + xx] += 1.0f;
    }
    d.x.insert(d.x.end(), img.begin(), img.end());
    d.labels.push_back(label);
  }
  return d;
}

TEST_F(ConvModel, TinyConvNetLearnsInFp32AndFp16WithScaling) {
  auto data = bar_images(384, 21);
  auto spec = models::parse_model("8x8x1-c4k3p1r-m2-f-3");
  std::map<Format, std::vector<float>> losses;
  std::map<Format, double> accuracy;
  std::set<std::string> histogram_tensors;
  for (Format fmt : {Format::F32, Format::F16}) {
    config::TrainConfig c;
    c.precision = fmt;
    c.batch = 16;
    c.epochs = 6;
    c.seed = 5;
    c.optimizer.lr = 0.05;
    c.optimizer.momentum = 0.9;
    c.scaler.histogram_interval = fmt == Format::F16 ? 20 : 0;
    if (fmt == Format::F32) c.scaler.mode = config::LossScaleMode::None;
    train::Trainer t(ctx(), c, spec, train::LossKind::SoftmaxXent, data);
    t.on_step = [&](const train::StepMetrics& m) { losses[fmt].push_back(m.loss); };
    t.on_histogram = [&](const train::TensorHistogram& h) { histogram_tensors.insert(h.tensor); };
    auto s = t.run();
    ASSERT_FALSE(s.failed) << s.failure;
    EXPECT_EQ(s.applied, 6u * 384 / 16);
    EXPECT_EQ(s.host_waits_in_loop, 0u);
    accuracy[fmt] = t.evaluate(data);
  }
  auto mean = [](const std::vector<float>& v, size_t from, size_t to) {
    double m = 0;
    for (size_t i = from; i < to; ++i) m += v[i];
    return m / double(to - from);
  };
  for (Format fmt : {Format::F32, Format::F16}) {
    const auto& l = losses[fmt];
    ASSERT_GE(l.size(), 32u) << format_name(fmt);
    EXPECT_LT(mean(l, l.size() - 24, l.size()), 0.5 * mean(l, 0, 8)) << format_name(fmt) << ": the loss did not fall";
    EXPECT_GT(accuracy[fmt], 0.85) << format_name(fmt);
  }
  EXPECT_NEAR(accuracy[Format::F16], accuracy[Format::F32], 0.05);
  EXPECT_EQ(histogram_tensors, (std::set<std::string>{"conv1.weight", "conv1.bias", "fc1.weight", "fc1.bias"}));
}

}  // namespace
}  // namespace vkamp::test
