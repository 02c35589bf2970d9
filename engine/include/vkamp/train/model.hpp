// A sequential MLP on the GPU: Linear layers, each optionally followed by
// an activation. Parameters live in flat buffers (fp32 masters, the 16-bit
// working copy, gradients, optimizer moments) with one layout, so the AMP
// pass and the optimizer each run as one dispatch over all of them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/ops/activation.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::train {

enum class Init { Kaiming, Xavier, Zero };

struct LayerSpec {
  uint32_t out = 0;
  bool activate = false;
  ops::Activation act = ops::Activation::ReLU;
};

struct ModelSpec {
  uint32_t inputs = 0;
  std::vector<LayerSpec> layers;
  Init init = Init::Kaiming;
};

// "784-256r-256r-10": widths, 'r'/'g'/'t' = ReLU/GELU/tanh after that layer.
ModelSpec parse_model(const std::string& s);
std::string describe(const ModelSpec& spec);

struct ParamTensor {
  std::string name;     // "fc1.weight"
  uint32_t offset = 0;  // elements; a multiple of kParamAlign
  uint32_t size = 0;
};

class Model {
 public:
  // Offsets are aligned so every tensor view meets any device's
  // minStorageBufferOffsetAlignment (at most 256 bytes).
  static constexpr uint32_t kParamAlign = 128;

  Model(Context& ctx, const ModelSpec& spec, Format fmt, uint32_t max_rows, uint64_t seed,
        bool moments1, bool moments2);
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelSpec& spec() const { return spec_; }
  Format format() const { return fmt_; }
  uint32_t outputs() const { return spec_.layers.back().out; }
  uint32_t param_elements() const { return total_; }  // padded
  uint64_t param_count() const;                       // real parameters
  const std::vector<ParamTensor>& tensors() const { return tensors_; }

  Buffer& master() { return *master_; }
  Buffer& working() { return *working_; }
  Buffer& grads() { return *grads_; }
  Buffer& moment1() { return *m1_; }
  Buffer& moment2() { return *m2_; }
  Buffer& output() { return *z_.back(); }    // logits / predictions, rows x outputs
  Buffer& doutput() { return *da_.back(); }  // their gradient

  // Records Y = model(x) for `rows` <= max_rows rows of x (fmt).
  void record_forward(Sequence& seq, BufferView x, uint32_t rows);
  // Records the gradients from doutput(); accumulate adds to grads().
  void record_backward(Sequence& seq, BufferView x, uint32_t rows, bool accumulate);

  // Host copies of the fp32 masters; writing also refreshes the working copy.
  std::vector<float> read_master() const;
  void write_master(const std::vector<float>& w);

 private:
  BufferView view(Buffer& b, const ParamTensor& t) const;

  Context& ctx_;
  ModelSpec spec_;
  Format fmt_;
  uint32_t max_rows_;
  uint32_t total_ = 0;
  std::vector<ParamTensor> tensors_;  // weight, bias per layer
  std::unique_ptr<Buffer> master_, working_, grads_, m1_, m2_;
  std::vector<std::unique_ptr<Buffer>> z_, a_, da_;  // per layer; a_ null = no activation
};

}  // namespace vkamp::train
