// A single product whose operands do not fit one storage binding
// (maxStorageBufferRange: 128 MiB on lavapipe and Adreno, the least the
// spec allows), such as a real vocabulary's logits or its embedding as the
// lm_head, runs as several products on views of the same buffers that each
// fit: C's rows (with A's, stored m x k) in blocks; C's columns in blocks
// where B is stored n x k; the shared dimension in blocks that accumulate
// into C where A is stored k x m or B k x n. No copies. Each view starts at
// the device's offset alignment, its first element given to the shader as
// the operand's `first`. A block of k accumulates through C in C's format,
// which rounds a 16-bit C once more per block: the price of a product that
// could not be bound at all.
#include <algorithm>
#include <numeric>
#include <string>

#include "gemm_detail.hpp"
#include "vkamp/context.hpp"
#include "vkamp/sequence.hpp"
#include "vkamp/error.hpp"

namespace vkamp::ops::detail {

namespace {

// The view of `elements` elements from element `start` of v, widened down
// to the alignment; `lead` is where element `start` lies in it.
BufferView aligned_window(BufferView v, uint64_t start, uint64_t elements, size_t eb, uint64_t align,
                          uint64_t& lead) {
  const uint64_t at = v.offset + start * eb, from = at - at % align;
  lead = (at - from) / eb;
  return BufferView(*v.buffer, from, at - from + elements * eb);
}

// The elements of `rows` stored rows of `cols`, `ld` apart.
uint64_t extent(uint64_t rows, uint64_t cols, uint64_t ld) { return rows == 0 ? 0 : (rows - 1) * ld + cols; }

}  // namespace

bool gemm_in_binding_chunks(Sequence& seq, Format fmt, const Gemm& g, const GemmKernel& kernel, BufferView a,
                            BufferView b, BufferView c, const GemmEpilogue& epilogue, uint32_t lanes) {
  const DeviceInfo& info = seq.context().info();
  const uint64_t range = info.max_storage_range;
  const bool z_fits = !epilogue.z || epilogue.z->bytes <= range;
  if (a.bytes <= range && b.bytes <= range && c.bytes <= range && z_fits) return false;
  const std::string limit = " (" + std::to_string(range) + " bytes on this device)";
  if (g.batch != 1) throw Error("gemm: a batched product's operands exceed one storage binding" + limit);
  const size_t eb = format_bytes(fmt);
  const uint64_t align = std::max<uint64_t>(info.storage_offset_alignment, eb);
  const uint64_t room = (range - align) / eb;  // elements a view holds after its aligned lead
  const uint64_t lda = g.lda ? g.lda : (g.trans_a ? g.m : g.k), ldb = g.ldb ? g.ldb : (g.trans_b ? g.k : g.n);
  const uint64_t ldc = g.ldc ? g.ldc : g.n;
  uint64_t mc = std::min<uint64_t>(g.m, room / ldc), nc = g.n, kc = g.k;
  if (!g.trans_a) mc = std::min(mc, room / lda);
  if (g.trans_a && extent(g.k, g.m, lda) > room) kc = room / lda;
  // B in blocks (a quantized weight) is cut into whole stored rows whose
  // views start at the alignment; the shader reads it from its view's start.
  const uint64_t b_row_bytes = g.b_blocks ? quant::ggml_row_bytes(*g.b_blocks, g.trans_b ? g.k : g.n) : 0;
  const uint64_t b_rows = g.b_blocks ? (range - 4) / b_row_bytes / (align / std::gcd(b_row_bytes, align)) *
                                           (align / std::gcd(b_row_bytes, align))
                                     : 0;
  if (g.b_blocks && g.trans_b && b.bytes > range) nc = b_rows;
  if (g.b_blocks && !g.trans_b && b.bytes > range) kc = std::min<uint64_t>(kc, b_rows);
  if (!g.b_blocks && g.trans_b && extent(g.n, g.k, ldb) > room) nc = room / ldb;
  if (!g.b_blocks && !g.trans_b && extent(g.k, g.n, ldb) > room) kc = std::min(kc, room / ldb);
  if (g.b_blocks && ((g.trans_b && kc < g.k) || (!g.trans_b && nc < g.n)))
    throw Error("gemm: B in ggml blocks is cut only into whole rows, but A or C would cut its rows" + limit);
  if (!epilogue.empty() || epilogue.z) {
    if (nc < g.n || kc < g.k || ldc != g.n)
      throw Error("gemm: a fused epilogue needs whole rows of C and the whole sum, but the operands exceed one "
                  "storage binding" + limit);
    // z is bound by rows from its own start: whole multiples of the alignment.
    const uint64_t row = uint64_t(g.n) * eb, granule = align / std::gcd(row, align);
    mc = mc / granule * granule;
  }
  if (mc == 0 || nc == 0 || kc == 0)
    throw Error("gemm: one row of an operand (m " + std::to_string(g.m) + ", n " + std::to_string(g.n) + ", k " +
                std::to_string(g.k) + ") exceeds one storage binding" + limit);
  for (uint64_t m0 = 0; m0 < g.m; m0 += mc)
    for (uint64_t n0 = 0; n0 < g.n; n0 += nc)
      for (uint64_t k0 = 0; k0 < g.k; k0 += kc) {
        Gemm s = g;
        s.m = uint32_t(std::min<uint64_t>(mc, g.m - m0));
        s.n = uint32_t(std::min<uint64_t>(nc, g.n - n0));
        s.k = uint32_t(std::min<uint64_t>(kc, g.k - k0));
        s.lda = uint32_t(lda), s.ldb = uint32_t(ldb), s.ldc = uint32_t(ldc);
        s.accumulate = g.accumulate || k0 > 0;
        const BufferView av = aligned_window(a, g.first_a + (g.trans_a ? k0 * lda + m0 : m0 * lda + k0),
                                             g.trans_a ? extent(s.k, s.m, lda) : extent(s.m, s.k, lda), eb, align,
                                             s.first_a);
        BufferView bv = b;
        if (g.b_blocks) {  // whole rows of blocks, the view a whole number of words
          const uint64_t first_row = g.trans_b ? n0 : k0, rows = g.trans_b ? s.n : s.k;
          bv = BufferView(*b.buffer, b.offset + first_row * b_row_bytes,
                          std::min(b.bytes - first_row * b_row_bytes, (rows * b_row_bytes + 3) / 4 * 4));
          s.ldb = 0;
          s.first_b = 0;
        } else {
          bv = aligned_window(b, g.first_b + (g.trans_b ? n0 * ldb + k0 : k0 * ldb + n0),
                              g.trans_b ? extent(s.n, s.k, ldb) : extent(s.k, s.n, ldb), eb, align, s.first_b);
        }
        const BufferView cv = aligned_window(c, g.first_c + m0 * ldc + n0, extent(s.m, s.n, ldc), eb, align, s.first_c);
        GemmEpilogue e = epilogue;
        if (e.z) e.z = BufferView(*e.z->buffer, e.z->offset + m0 * g.n * eb, uint64_t(s.m) * g.n * eb);
        gemm_with(seq, fmt, s, kernel, av, bv, cv, e, lanes);
      }
  return true;
}

}  // namespace vkamp::ops::detail
