// A sequential model on the GPU: Linear, Conv2d, max/average pooling and
// Flatten layers (model_spec.hpp), each Linear or Conv2d optionally
// followed by an activation. Parameters live in flat buffers (fp32 masters,
// the 16-bit working copy, gradients, optimizer moments) with one layout, so
// the AMP pass and the optimizer each run as one dispatch over all of them.
//
// Tensors, named per kind in order ("conv1.weight", "conv1.bias",
// "fc1.weight", ...; param_layout.hpp): a Linear weight is out x in
// (row-major, y = x W^T + b); a Conv2d weight is out_c x (ky, kx, in_c), the
// NHWC patch order of ops::Conv2d, so the conv is one GEMM over the im2col
// matrix.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/ops/activation.hpp"
#include "vkamp/ops/conv.hpp"
#include "vkamp/ops/pool.hpp"
#include "vkamp/sequence.hpp"
#include "vkamp/train/model_spec.hpp"
#include "vkamp/train/param_layout.hpp"

namespace vkamp::train {

class Model {
 public:
  // The alignment of every tensor's offset (param_layout.hpp).
  static constexpr uint32_t kParamAlign = kParamTensorAlign;

  Model(Context& ctx, const ModelSpec& spec, Format fmt, uint32_t max_rows, uint64_t seed,
        bool moments1, bool moments2);
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelSpec& spec() const { return spec_; }
  Format format() const { return fmt_; }
  uint32_t outputs() const { return shapes_.back().elements(); }
  // The activation shapes: [0] the input, [l + 1] the output of layer l.
  const std::vector<Shape>& shapes() const { return shapes_; }
  uint32_t param_elements() const { return total_; }  // padded
  uint64_t param_count() const;                       // real parameters
  const std::vector<ParamTensor>& tensors() const { return tensors_; }

  Buffer& master() { return *master_; }
  Buffer& working() { return *working_; }
  Buffer& grads() { return *grads_; }
  Buffer& moment1() { return *m1_; }
  Buffer& moment2() { return *m2_; }
  Buffer& output();   // logits / predictions, rows x outputs
  Buffer& doutput();  // their gradient

  // Records Y = model(x) for `rows` <= max_rows rows of x (fmt).
  void record_forward(Sequence& seq, BufferView x, uint32_t rows);
  // Records the gradients from doutput(); accumulate adds to grads(). Uses
  // the activations (and each conv's im2col matrix) of the last
  // record_forward on the same x and rows, recorded before it.
  void record_backward(Sequence& seq, BufferView x, uint32_t rows, bool accumulate);

  // Host copies of the fp32 masters; writing also refreshes the working copy.
  std::vector<float> read_master() const;
  void write_master(const std::vector<float>& w);

 private:
  // One layer's place in the model and the buffers it owns. A Flatten owns
  // nothing: its output and gradient are those of the layer before it.
  struct Layer {
    LayerSpec spec;
    Shape in, out;
    int weight = -1;          // index of its weight in tensors_ (the bias follows); -1 without parameters
    bool needs_dx = false;    // a layer before it has parameters, so the gradient must flow back
    int owner = -1;           // the layer whose buffers hold this output; -1 = the model input x
    std::unique_ptr<Buffer> z;    // output (before the activation, if any)
    std::unique_ptr<Buffer> a;    // output after the activation; null without one
    std::unique_ptr<Buffer> dy;   // gradient of the output (made dz in place); null before the first parameters
    std::unique_ptr<Buffer> col;  // Conv2d: im2col of the input, kept from forward for dW
  };

  BufferView view(Buffer& b, const ParamTensor& t) const;
  BufferView output_of(int owner, BufferView x) const;  // owner -1 = x
  Buffer& grad_of(int owner);
  ops::Conv2d conv_of(const Layer& L, uint32_t rows) const;
  ops::Pool2d pool_of(const Layer& L, uint32_t rows) const;

  Context& ctx_;
  ModelSpec spec_;
  std::vector<Shape> shapes_;
  Format fmt_;
  uint32_t max_rows_;
  uint32_t total_ = 0;
  std::vector<ParamTensor> tensors_;  // weight, bias per Linear/Conv2d layer
  std::unique_ptr<Buffer> master_, working_, grads_, m1_, m2_;
  std::vector<Layer> layers_;
  std::unique_ptr<Buffer> dcol_;  // the convs' dX scratch (dY W), shared: backward runs one layer at a time
};

}  // namespace vkamp::train
