// embedding.comp (ops::embedding_forward): y = wte[ids] + wpe[position].
#ifndef VKAMP_INTERFACE_EMBEDDING_H
#define VKAMP_INTERFACE_EMBEDDING_H
#include "macros.h"

VKAMP_PUSH(EmbeddingPush)
  uint n;  // rows * cols
  uint cols, seq_len, vocab;
  uvec2 by_cols, by_seq_len;  // fast divisors (fastdiv.glsl)
VKAMP_PUSH_END(EmbeddingPush, p, 32)

VKAMP_SHADER(EmbeddingShader, embedding, 4, EmbeddingPush)  // ids, wte, wpe, y

#endif
