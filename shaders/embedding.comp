#version 450
#extension GL_GOOGLE_include_directive : require
// Token plus learned position embedding:
//   y[b, t, :] = wte[ids[b, t], :] + wpe[t, :],  rows r = b * T + t,
// or the token embedding alone (POSITIONS = 0: wpe is not read).
// An id >= vocab reads nothing and gives a NaN row, as a label out of range
// does in softmax_xent: the bad data shows up in the loss instead of being
// silently clamped to some real token. wte holds the table's rows
// [first_id, first_id + view_rows): the ids elsewhere are another
// dispatch's.
#include "types.glsl"
#include "fastdiv.glsl"
#include "elementwise.glsl"

layout(constant_id = 0) const uint POSITIONS = 1;

layout(std430, binding = 0) readonly buffer Ids { uint ids[]; };
#if defined(VKAMP_GEMM_QUANT)
// The ".quant" variant: the table in ggml blocks (a quantized frozen base).
layout(std430, binding = 1) readonly buffer Wte { uint wte_words[]; };
#define QWORD(w) wte_words[w]
#include "dequant.glsl"
#define WTE_AT(i) quant_value(i)
#else
layout(std430, binding = 1) readonly buffer Wte { sfp wte[]; };
#define WTE_AT(i) sfp2f(wte[i])
#endif
layout(std430, binding = 2) readonly buffer Wpe { sfp wpe[]; };
layout(std430, binding = 3) writeonly buffer Y { sfp y[]; };
#include "vkamp/gpu_abi/embedding.h"

void main() {
  FOR_EACH_ELEMENT(i, p.n) {
    uint r = fast_div(i, p.by_cols);
    uint c = i - r * p.cols;
    uint t = r - fast_div(r, p.by_seq_len) * p.seq_len;
    uint id = ids[r];
    bool ends_table = p.first_id + p.view_rows == p.vocab;
    if (id < p.first_id || (id - p.first_id >= p.view_rows && !(ends_table && id >= p.vocab))) continue;
    float v = id < p.vocab ? WTE_AT((id - p.first_id) * p.cols + c) : uintBitsToFloat(0x7FC00000u);
    if (POSITIONS != 0u) v += sfp2f(wpe[t * p.cols + c]);
    y[i] = f2sfp(v);
  }
}
