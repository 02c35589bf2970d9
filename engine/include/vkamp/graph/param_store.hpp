// A graph's parameters on the device: the flat buffers of param_layout.hpp
// (fp32 masters, 16-bit working copy, 16-bit gradients, fp32 moments) and
// their seeded initialisation.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/graph/graph.hpp"
#include "vkamp/graph/param_layout.hpp"

namespace vkamp::graph {

class ParamStore {
 public:
  // moments1/2: whether the optimizer keeps first and second moments.
  ParamStore(Context& ctx, const Graph& g, Format fmt, uint64_t seed, bool moments1, bool moments2);

  const std::vector<ParamTensor>& tensors() const { return tensors_; }
  uint32_t padded_elements() const { return total_; }
  uint64_t count() const;  // real parameters, padding left out
  // The layout entry of the graph's tensor `graph_index` (a Param).
  const ParamTensor& of(int graph_index) const;
  BufferView view(Buffer& b, const ParamTensor& t) const;

  Buffer& master() { return *master_; }
  Buffer& working() { return *working_; }
  Buffer& grads() { return *grads_; }
  Buffer& moment1() { return *m1_; }
  Buffer& moment2() { return *m2_; }
  uint64_t parameter_bytes() const { return master_->bytes() + working_->bytes() + grads_->bytes(); }
  uint64_t optimizer_bytes() const { return m1_->bytes() + m2_->bytes(); }

  std::vector<float> read_master() const;
  // Also refreshes the working copy, rounded as the optimizer rounds.
  void write_master(const std::vector<float>& w);

 private:
  Format fmt_;
  uint32_t total_ = 0;
  std::vector<ParamTensor> tensors_;
  std::vector<int> graph_index_;  // of each tensors_ entry
  std::unique_ptr<Buffer> master_, working_, grads_, m1_, m2_;
};

}  // namespace vkamp::graph
