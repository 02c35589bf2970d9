// Records a graph's forward and backward into a Sequence. Backward runs in
// reverse topological order; the first contribution to a gradient writes
// it, later ones (a tensor or parameter used twice) add to it. Activations,
// their gradients and op scratch live in two pools laid out by the memory
// plan (memory_plan.hpp) over the step's timeline: forward node k at time
// k, the loss at N, backward of node k at 2N - k (with recomputation, the
// backward's times are further apart: executor_recompute.cpp).
//
// Each step runs in the storage format the precision level gives it
// (precision_plan.hpp); its output is stored in that format. Where a step
// reads a tensor stored in another format, a cast step (op "cast") runs
// before it: the forward converts the value, the backward converts the
// gradient back. A parameter read in fp32 is its fp32 master. At O2 (and O0,
// O3) every step runs in the run's format and there are no casts.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/device_blocks.hpp"
#include "vkamp/graph/buffer_store.hpp"
#include "vkamp/graph/graph.hpp"
#include "vkamp/graph/memory_plan.hpp"
#include "vkamp/graph/op.hpp"
#include "vkamp/graph/frozen_store.hpp"
#include "vkamp/graph/param_store.hpp"
#include "vkamp/graph/precision_plan.hpp"
#include "vkamp/graph/scale_groups.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::graph {

class Executor {
 public:
  // Plans its memory and allocates nothing: allocate() does, once the plan
  // is known to fit (train::Model checks it against the device's budget).
  // recompute (--recompute): each block's forward runs again in the
  // backward, from the block's input, instead of keeping its activations
  // (executor_recompute.cpp).
  Executor(Context& ctx, const Graph& g, Format fmt, uint32_t max_rows, AmpLevel level = AmpLevel::O2,
           bool recompute = false);
  // The stores it reads; `frozen` holds the graph's frozen parameters
  // (none: nullptr). Call once, before recording.
  void allocate(ParamStore& params, BufferStore& buffers, const FrozenStore* frozen);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Y = graph(x) for rows <= max_rows rows of x. Training mode stages
  // micro-batch `micro_batch`'s statistics (< micro_batches()) for the
  // commit; Eval reads the running statistics and stages nothing.
  // Returns the sequence it ended in: `seq` unless a host sync point
  // (set_host_sync) cut the recording.
  Sequence& record_forward(Sequence& seq, BufferView x, uint32_t rows, ForwardMode mode = ForwardMode::Training,
                           uint32_t micro_batch = 0);
  // Parameter gradients from doutput(), added to grads() when accumulate.
  // Reads the activations (and micro-batch) of the last record_forward, in
  // training mode, on the same x and rows.
  // Returns the sequence it ended in, as record_forward.
  Sequence& record_backward(Sequence& seq, BufferView x, uint32_t rows, bool accumulate);
  // The update pass's part after the optimizer: each node's commit
  // (OpDef::commit; BatchNorm folds the staged statistics of every
  // micro-batch into its running buffers), predicated on train_state's
  // applied flag. rows: per micro-batch, as recorded by the forwards.
  void record_commit(Sequence& seq, Buffer& train_state, uint32_t rows);

  // Micro-batches per step (default 1): sizes the nodes' staged state. Call
  // before recording.
  void set_micro_batches(uint32_t micro_batches);
  uint32_t micro_batches() const { return micro_batches_; }
  // --sync-bn under MPI: training-mode recordings stop at every OpRun::sync
  // point and continue in the sequence `cut` returns; `cut` ends the
  // current one and arranges for the host to merge `state` (floats of the
  // node state at `offset` bytes) across `ranks` ranks by `rule` before the
  // next runs. ranks 1 (the default): no sync points, nothing changes.
  using HostSyncCut = std::function<Sequence&(Sequence& ending, Buffer& state, size_t offset, size_t bytes, HostSync rule)>;
  void set_host_sync(uint32_t ranks, HostSyncCut cut);
  // Where ops draw counter-based random numbers (dropout; op.hpp). Without
  // one, the seed is 0 and the step number a zero the executor keeps.
  void set_random_source(const RandomSource& source) { random_ = source; }
  // Each node's persistent fp32 memory (OpDef::state_floats), in bytes.
  uint64_t node_state_bytes() const;

  // The nodes it runs (the graph's after epilogue fusion, which O1 skips so
  // that activations run in fp32, with the cast steps), in forward order.
  const std::vector<Node>& steps() const { return steps_; }
  // The storage format step k runs in (and its output is stored in).
  Format step_format(size_t k) const { return nodes_fmt_.at(k); }
  AmpLevel level() const { return level_; }
  // Activation buffers (values, gradients, the output and its gradient) by
  // storage format, in bytes, before reuse: what each format takes.
  std::map<Format, uint64_t> activation_bytes_by_format() const;
  // Per-layer loss scaling (scale_groups.hpp): after the backward of each
  // group's first node, the gradient of its input 0 is multiplied in fp32 by
  // factors[g] (fp32, indexed by group, read on the GPU), rounded once to
  // the format. nullptr: off.
  void set_group_rescale(const Buffer* factors, ScaleGroups groups);

  Buffer& output() { return *output_; }
  Buffer& doutput() { return *doutput_; }
  uint64_t activation_bytes() const { return activation_plan_.pool_bytes + 2 * output_bytes_; }
  uint64_t activation_unshared_bytes() const;
  uint64_t workspace_bytes() const { return workspace_plan_.pool_bytes; }
  // Recomputation: whether this executor recomputes, whether the graph has
  // a block whose forward could run again (a run of steps named under one
  // `<path>.<number>.`, executor_recompute.cpp), and the activation bytes
  // (as activation_bytes()) and workspace bytes the plan takes with it and
  // without it, both planned whichever this executor runs (the memory line
  // shows both).
  bool recomputes() const { return recompute_; }
  bool can_recompute() const { return can_recompute_; }
  uint64_t activation_bytes(bool recompute) const {
    return pool_bytes_by_recompute_[recompute].activations + 2 * output_bytes_;
  }
  uint64_t workspace_bytes(bool recompute) const { return pool_bytes_by_recompute_[recompute].workspace; }

  // The planned buffers, for tests: byte range in its pool and lifetime.
  struct Placement {
    bool workspace = false;  // which pool
    uint64_t offset = 0, bytes = 0;
    uint32_t first = 0, last = 0;
  };
  std::vector<Placement> placements() const;

 private:
  class Run;
  struct NodeState;
  struct Storage;
  // When each step's backward runs, and its forward again where it is
  // recomputed (executor_recompute.cpp).
  struct Timeline {
    std::vector<uint32_t> back;
    std::vector<int64_t> again;  // -1: not run again
    // Per step: the steps whose forward runs again just before its backward.
    std::vector<std::vector<size_t>> again_before;
    bool recomputable = false;  // some step would run again with recomputation
  };
  void insert_casts(const std::vector<Node>& nodes);
  void analyse();
  void plan();
  void plan_for(bool recompute);
  Timeline timeline(bool recompute) const;
  // Per root tensor with a gradient (grads: its lifetime), the tensor whose
  // gradient buffer holds it: itself, or the output of a sum it feeds
  // (executor_grad_alias.cpp).
  std::vector<int> sum_gradient_homes(const std::vector<std::optional<Lifetime>>& grads) const;
  int index(const std::string& tensor) const { return index_.at(tensor); }

  void run_node(uint32_t rows, size_t k, const std::function<void(OpRun&)>& what, Buffer* train_state = nullptr);

  Context& ctx_;
  const Graph& graph_;
  // The graph's tensors and the cast steps' outputs, by index and name;
  // per tensor its storage format, and for a cast of a parameter (bound to
  // its fp32 master) the parameter's index (-1 otherwise).
  std::vector<Tensor> tensors_;
  std::map<std::string, int> index_;
  std::vector<Format> tensor_fmt_;
  std::vector<int> cast_param_;
  std::vector<Format> nodes_fmt_;  // per step
  // The nodes this executor runs: the graph's after fuse_epilogues, so a
  // step's forward is node k at time k of this list, not of graph_.nodes().
  std::vector<Node> steps_;
  std::vector<int> producer_;  // per tensor: the step writing it; -1 for none
  Format fmt_;
  AmpLevel level_;
  uint32_t max_rows_;
  ParamStore* params_ = nullptr;
  const FrozenStore* frozen_ = nullptr;
  BufferStore* buffers_ = nullptr;
  // OpDef::state_floats: one fp32 buffer, each node's part at
  // node_state_offset_[k] floats (-1: none), sized for micro_batches_.
  uint32_t micro_batches_ = 1;
  std::vector<int64_t> node_state_offset_, node_state_floats_;
  std::unique_ptr<Buffer> node_state_;
  uint64_t node_state_floats_total_ = 0;
  // The last record_forward's mode and micro-batch.
  ForwardMode mode_ = ForwardMode::Training;
  uint32_t micro_batch_ = 0;
  std::vector<std::unique_ptr<NodeState>> nodes_;
  std::vector<int> root_;              // per tensor: the tensor whose bytes it is (views)
  std::vector<bool> requires_grad_, receives_grad_;
  std::vector<int> value_slot_, grad_slot_;  // per root tensor: index into the activation lifetimes
  // Recomputation: per root tensor, the slot its producer's second forward
  // writes and the backward reads (-1: value_slot_ serves both), and per
  // step the steps recorded again before its backward.
  bool recompute_ = false, can_recompute_ = false;
  std::vector<int> again_slot_;
  std::vector<std::vector<size_t>> again_before_;
  struct PoolBytes {
    uint64_t activations = 0, workspace = 0;
  } pool_bytes_by_recompute_[2];
  // While a backward is recorded (the recomputed forwards too): reads take
  // again_slot_ and NodeState::kept_again where there are.
  bool in_backward_ = false;
  std::vector<Lifetime> activation_lifetimes_, workspace_lifetimes_;
  std::vector<Format> activation_fmt_;  // per activation lifetime
  MemoryPlan activation_plan_, workspace_plan_;
  BlockLayout block_layout() const;
  std::unique_ptr<DeviceBlocks> activation_pool_, workspace_pool_;
  std::unique_ptr<Buffer> output_, doutput_;
  uint64_t output_bytes_ = 0;  // each of output_ and doutput_
  // While recording a backward: which gradients hold a contribution.
  std::vector<bool> written_;
  bool accumulate_params_ = false;
  std::optional<BufferView> x_;  // the input of the step being recorded
  Sequence* seq_ = nullptr;      // the sequence being recorded into (sync points change it)
  uint32_t synced_ranks_ = 1;
  HostSyncCut host_sync_cut_;
  // set_group_rescale: per step, the group it starts whose input gradient
  // is rescaled (-1: none).
  const Buffer* rescale_factors_ = nullptr;
  std::vector<int> rescale_group_;
  RandomSource random_;
  std::unique_ptr<Buffer> zero_counter_;  // random_.counter when none was set
};

}  // namespace vkamp::graph
