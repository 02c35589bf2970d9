// attention_fused.comp and attention_fused_grad.comp (ops::attention, the
// fused path), and their tensor-core twins attention_mma*.comp: causal
// attention over every (example, head) without the seq x seq probabilities
// in memory. Layouts as ops/attention.hpp: qkv
// [batch, seq, 3 channels], y and dy [batch, queries, channels]; lse and
// dsum one fp32 value per (example, head, query row).
// The rows of each (example, head) are its last `queries` positions (seq in
// training, 1 when decoding), as in attention_softmax.h.
#ifndef VKAMP_INTERFACE_ATTENTION_FUSED_H
#define VKAMP_INTERFACE_ATTENTION_FUSED_H
#include "macros.h"

VKAMP_PUSH(AttentionFusedPush)
  uint heads;
  uint seq;
  uint queries;
  uint channels;
  float alpha;      // 1 / sqrt(head size)
  uint accumulate;  // backward: add to dqkv's old values
VKAMP_PUSH_END(AttentionFusedPush, p, 24)

VKAMP_SHADER(AttentionFusedShader, attention_fused, 3, AttentionFusedPush)  // qkv, y, lse
// qkv, y, dy, dqkv, lse, dsum
VKAMP_SHADER(AttentionFusedGradShader, attention_fused_grad, 6, AttentionFusedPush)
// The same kernels on 16 x 16 fp16 fragments (tensor cores; attention_mma.comp,
// attention_mma_grad.comp): the same bindings.
VKAMP_SHADER(AttentionMmaShader, attention_mma, 3, AttentionFusedPush)
VKAMP_SHADER(AttentionMmaGradShader, attention_mma_grad, 6, AttentionFusedPush)

#endif
