#include "vkamp/graph/frozen_store.hpp"

#include <algorithm>

#include "param_init.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/error.hpp"
#include "vkamp/quant/dequantize.hpp"
#include "vkamp/quant/quantize.hpp"

namespace vkamp::graph {

namespace {

// A view of blocks covers whole words: dequant.glsl reads words, and a
// tensor of 210-byte Q6_K blocks may end mid-word.
uint64_t view_bytes(bool blocks, uint64_t bytes) { return blocks ? (bytes + 3) / 4 * 4 : bytes; }

}  // namespace

std::vector<FrozenTensor> FrozenStore::layout(const Graph& g, Format fmt, const BlockLayout& blocks, uint64_t* end) {
  std::vector<FrozenTensor> out;
  *end = 0;
  for (int i : g.frozen_indices()) {
    const Tensor& t = g.tensors()[i];
    const uint64_t n = elements(t);
    const uint64_t bytes = t.blocks ? quant::ggml_row_bytes(*t.blocks, n) : n * format_bytes(fmt);
    out.push_back({t.name, blocks.append(*end, view_bytes(t.blocks.has_value(), bytes), "the frozen tensor " + t.name), n,
                   t.blocks, bytes,
                   t.dims.empty() ? n : t.dims.back()});
  }
  return out;
}

FrozenStore::FrozenStore(Context& ctx, const Graph& g, Format fmt, uint64_t seed)
    : fmt_(fmt), graph_index_(g.frozen_indices()) {
  const BlockLayout blocks = BlockLayout::of(ctx);
  uint64_t end = 0;
  tensors_ = layout(g, fmt, blocks, &end);
  if (tensors_.empty()) return;
  values_ = std::make_unique<DeviceBlocks>(ctx, blocks, end, "the frozen base");
  values_->fill(0);  // padding
  for (size_t i = 0; i < tensors_.size(); ++i) {
    std::mt19937_64 gen(seed ^ (0x9E3779B97F4A7C15ull * (i + 1)));
    const Tensor& t = g.tensors()[graph_index_[i]];
    if (t.blocks) {
      write_initial_blocks(t, gen);
      continue;
    }
    write(tensors_[i].name, initial_values(t, gen));
  }
}

// A pool of up to 64 rows drawn from the Init and quantized once, repeated
// down the tensor: quantizing a whole random 8B base into k-quant blocks
// would take minutes, and a loaded checkpoint overwrites it anyway.
void FrozenStore::write_initial_blocks(const Tensor& t, std::mt19937_64& gen) {
  Tensor pool = t;
  pool.dims[0] = std::min<uint32_t>(t.dims[0], 64);
  const std::vector<float> v = initial_values(pool, gen);
  std::vector<uint8_t> blocks(quant::ggml_row_bytes(*t.blocks, v.size()));
  quant::quantize_row(*t.blocks, v.data(), blocks.data(), v.size());
  for (uint32_t row = 0; row < t.dims[0]; row += pool.dims[0]) {
    const uint64_t rows = std::min(pool.dims[0], t.dims[0] - row);
    write_blocks(t.name, row, blocks.data(), blocks.size() / pool.dims[0] * rows);
  }
}

uint64_t FrozenStore::count() const {
  uint64_t n = 0;
  for (const FrozenTensor& t : tensors_) n += t.size;
  return n;
}

const FrozenTensor& FrozenStore::of(int graph_index) const {
  auto it = std::find(graph_index_.begin(), graph_index_.end(), graph_index);
  if (it == graph_index_.end()) throw Error("FrozenStore: tensor " + std::to_string(graph_index) + " is not frozen");
  return tensors_[it - graph_index_.begin()];
}

const FrozenTensor& FrozenStore::named(const std::string& name) const {
  for (const FrozenTensor& t : tensors_)
    if (t.name == name) return t;
  throw Error("FrozenStore: no frozen parameter " + name);
}

BufferView FrozenStore::view(const FrozenTensor& t) const {
  return values_->view(t.offset, view_bytes(t.blocks.has_value(), t.bytes));
}

void FrozenStore::write(const std::string& name, const std::vector<float>& values) {
  const FrozenTensor& t = named(name);
  if (values.size() != t.size)
    throw Error("FrozenStore: " + std::to_string(values.size()) + " values for " + name + " of " + std::to_string(t.size));
  write_slice(name, 0, values);
}

void FrozenStore::write_slice(const std::string& name, uint64_t first, const std::vector<float>& values) {
  const FrozenTensor& t = named(name);
  if (first > t.size || values.size() > t.size - first)
    throw Error("FrozenStore: " + std::to_string(values.size()) + " values from element " + std::to_string(first) +
                " of " + name + ", which has " + std::to_string(t.size));
  if (t.blocks) {  // whole rows, quantized on the host
    const quant::GgmlTypeInfo& info = quant::ggml_type_info(*t.blocks);
    if (first % info.block_values != 0 || values.size() % info.block_values != 0)
      throw Error("FrozenStore: a slice of " + name + " held in " + info.name + " blocks must be whole blocks");
    std::vector<uint8_t> bytes(quant::ggml_row_bytes(*t.blocks, values.size()));
    try {
      quant::quantize_rows_in_parallel(*t.blocks, values.data(), bytes.data(), values.size());
    } catch (const std::invalid_argument& e) {
      throw ConfigError(name + " cannot be held in " + info.name + " blocks: " + e.what());
    }
    values_->write(t.offset + quant::ggml_row_bytes(*t.blocks, first), bytes.data(), bytes.size());
    return;
  }
  const std::vector<uint8_t> bytes = pack(fmt_, values);
  values_->write(t.offset + first * format_bytes(fmt_), bytes.data(), bytes.size());
}

void FrozenStore::write_blocks(const std::string& name, uint64_t first_row, const uint8_t* bytes, uint64_t n) {
  const FrozenTensor& t = named(name);
  if (!t.blocks) throw Error("FrozenStore: " + name + " is not held in blocks");
  const uint64_t row_bytes = quant::ggml_row_bytes(*t.blocks, t.row);
  if (first_row * row_bytes > t.bytes || n > t.bytes - first_row * row_bytes)
    throw Error("FrozenStore: " + std::to_string(n) + " bytes from row " + std::to_string(first_row) + " of " + name +
                ", which has " + std::to_string(t.bytes));
  values_->write(t.offset + first_row * row_bytes, bytes, n);
}

std::vector<float> FrozenStore::read(const std::string& name) const {
  const FrozenTensor& t = named(name);
  std::vector<uint8_t> bytes(t.bytes);
  values_->read(t.offset, bytes.data(), bytes.size());
  if (!t.blocks) return unpack(fmt_, bytes);
  std::vector<float> v(t.size);
  quant::dequantize_row(*t.blocks, bytes.data(), v.data(), t.size);
  return v;
}

}  // namespace vkamp::graph
