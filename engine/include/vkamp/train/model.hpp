// A model on the GPU: the owner of a compiled graph (graph/): its
// parameters in flat buffers (fp32 masters, the 16-bit working copy,
// gradients, optimizer moments) with one layout, so the AMP pass and the
// optimizer each run as one dispatch over all of them, and the executor
// that records its forward and backward over planned activation memory.
//
// Built from a model string (model_spec.hpp; tensors "conv1.weight",
// "conv1.bias", "fc1.weight", ...) or from any graph. A Linear weight is
// out x in (row-major, y = x W^T + b); a Conv2d weight is out_c x (ky, kx,
// in_c), the NHWC patch order of ops::Conv2d.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/graph/buffer_store.hpp"
#include "vkamp/graph/executor.hpp"
#include "vkamp/graph/frozen_store.hpp"
#include "vkamp/graph/graph.hpp"
#include "vkamp/graph/memory_plan.hpp"
#include "vkamp/graph/param_store.hpp"
#include "vkamp/sequence.hpp"
#include "vkamp/models/model_spec.hpp"
#include "vkamp/models/param_layout.hpp"
#include "vkamp/train/logit_chunks.hpp"

namespace vkamp::train {

class Model {
 public:
  // The alignment of every tensor's offset (param_layout.hpp).
  static constexpr uint32_t kParamAlign = graph::kParamTensorAlign;

  // moments1/2: whether the optimizer keeps first and second moments.
  // level: which steps run in fmt and which in fp32 (precision_plan.hpp).
  // recompute: --recompute (graph::Executor). chunking: whether a language
  // model's head runs in chunks (logit_chunks.hpp), where its graph allows;
  // then output() is never whole.
  Model(Context& ctx, const models::ModelSpec& spec, Format fmt, uint32_t max_rows, uint64_t seed, bool moments1,
        bool moments2, graph::AmpLevel level = graph::AmpLevel::O2, bool recompute = false,
        LogitChunking chunking = {});
  Model(Context& ctx, graph::Graph g, Format fmt, uint32_t max_rows, uint64_t seed, bool moments1, bool moments2,
        graph::AmpLevel level = graph::AmpLevel::O2, bool recompute = false, LogitChunking chunking = {});
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const graph::Graph& graph() const { return graph_; }
  // The model string's spec; empty (no layers) for a model built from a graph.
  const models::ModelSpec& spec() const { return spec_; }
  // The model string, or the graph's origin (its file), for checkpoints.
  const std::string& description() const { return graph_.origin(); }
  Format format() const { return fmt_; }
  uint32_t inputs() const { return graph_.input_tensor().shape.elements(); }
  uint32_t outputs() const { return graph_.output_tensor().shape.elements(); }
  // A language model's input is token ids (uint32); its output holds
  // `classes` logits at each of `positions` positions (1 for a classifier).
  bool reads_ids() const { return graph_.input_tensor().shape.ids; }
  uint32_t positions() const { return graph_.output_tensor().shape.positions(); }
  uint32_t classes() const { return graph_.output_tensor().shape.c; }
  // Bytes of one example's input as the model reads it.
  size_t input_row_bytes() const { return size_t(inputs()) * (reads_ids() ? 4 : format_bytes(fmt_)); }
  uint32_t param_elements() const { return params_->padded_elements(); }  // padded
  uint64_t param_count() const { return params_->count(); }               // real parameters
  const std::vector<graph::ParamTensor>& tensors() const { return params_->tensors(); }
  // What it holds on the device; planned(): what it was planned to hold
  // before anything was allocated (the same, save the blocks' rounding).
  graph::MemoryReport memory() const;
  const graph::MemoryReport& planned() const { return plan_; }
  // A model's plan on ctx's device, allocating nothing (the settings that
  // would fit, when a run's do not).
  static graph::MemoryReport plan(Context& ctx, const graph::Graph& g, Format fmt, uint32_t max_rows, bool moments1,
                                  bool moments2, graph::AmpLevel level = graph::AmpLevel::O2, bool recompute = false,
                                  LogitChunking chunking = {});

  Buffer& master() { return params_->master(); }
  Buffer& working() { return params_->working(); }
  Buffer& grads() { return params_->grads(); }
  Buffer& moment1() { return params_->moment1(); }
  Buffer& moment2() { return params_->moment2(); }
  // Logits / predictions, rows x outputs, and their gradient; an Error
  // where the logits are never whole (logit_chunks()).
  Buffer& output();
  Buffer& doutput();
  // The head that runs in chunks (nullptr: none), the frozen weight it
  // multiplies by, and its input h (the executor's output) and dh.
  LogitChunks* logit_chunks() { return chunks_.get(); }
  BufferView head_weight() const;
  Buffer& hidden() { return executor_->output(); }
  Buffer& hidden_grad() { return executor_->doutput(); }
  const graph::Executor& executor() const { return *executor_; }
  graph::Executor& executor() { return *executor_; }

  // Records Y = model(x) for `rows` <= max_rows rows of x (fmt). Training
  // (a step's micro-batch `micro_batch`) normalises with the batch's
  // statistics, Eval with the running ones (Executor::record_forward).
  // Returns the sequence it ended in (Executor::set_host_sync).
  Sequence& record_forward(Sequence& seq, BufferView x, uint32_t rows,
                           graph::ForwardMode mode = graph::ForwardMode::Training, uint32_t micro_batch = 0) {
    return executor_->record_forward(seq, x, rows, mode, micro_batch);
  }
  // Records the gradients from doutput(); accumulate adds to grads(). Uses
  // the activations of the last record_forward on the same x and rows,
  // recorded before it.
  Sequence& record_backward(Sequence& seq, BufferView x, uint32_t rows, bool accumulate) {
    return executor_->record_backward(seq, x, rows, accumulate);
  }

  // After the optimizer, predicated on train_state's applied flag: folds the
  // step's staged batch statistics into the running buffers.
  void record_commit(Sequence& seq, Buffer& train_state, uint32_t rows) {
    executor_->record_commit(seq, train_state, rows);
  }

  // The graph's buffers (BatchNorm's running statistics), fp32.
  const graph::BufferStore& buffers() const { return *buffers_; }
  const std::vector<graph::ParamTensor>& buffer_tensors() const { return buffers_->tensors(); }
  std::vector<float> read_buffers() const { return buffers_->read(); }
  void write_buffers(const std::vector<float>& v) { buffers_->write(v); }

  // The frozen parameters (a fine-tune's base weights), in the storage format.
  graph::FrozenStore& frozen() { return *frozen_; }
  const graph::FrozenStore& frozen() const { return *frozen_; }

  // Host copies of the fp32 masters; writing also refreshes the working copy.
  std::vector<float> read_master() const { return params_->read_master(); }
  void write_master(const std::vector<float>& w) { params_->write_master(w); }

 private:
  models::ModelSpec spec_;
  graph::Graph graph_;
  // What the executor runs: graph_, or graph_ without its head when chunked.
  graph::Graph body_;
  Format fmt_;
  std::unique_ptr<graph::ParamStore> params_;
  std::unique_ptr<graph::FrozenStore> frozen_;
  std::unique_ptr<graph::BufferStore> buffers_;
  std::unique_ptr<graph::Executor> executor_;
  std::unique_ptr<LogitChunks> chunks_;
  graph::MemoryReport plan_;

  // The head and its rows per chunk where it runs in chunks (rows 0: whole).
  struct Head {
    std::optional<LogitHead> head;
    uint32_t rows = 0;
  };
  static Head chunked_head(const Context& ctx, const graph::Graph& g, Format fmt, uint32_t max_rows,
                           graph::AmpLevel level, LogitChunking chunking);
  static graph::MemoryReport planned_for(Context& ctx, const graph::Graph& g, Format fmt, const graph::Executor& e,
                                         bool moments1, bool moments2, const Head& head, uint32_t max_rows);
  static void add_other_recompute(graph::MemoryReport& r, const graph::Executor& e);
  void check_binding_fits(const Context& ctx) const;
};

}  // namespace vkamp::train
