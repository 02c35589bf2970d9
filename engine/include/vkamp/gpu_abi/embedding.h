// embedding.comp (ops::embedding_forward): y = wte[ids] + wpe[position],
// for the ids in [first_id, first_id + view_rows), the rows of wte bound
// (a table larger than one binding is read in views of rows; the view
// that ends the table also writes the NaN rows of ids past it).
#ifndef VKAMP_INTERFACE_EMBEDDING_H
#define VKAMP_INTERFACE_EMBEDDING_H
#include "macros.h"

VKAMP_PUSH(EmbeddingPush)
  uint n;  // rows * cols
  uint cols, seq_len, vocab;
  uvec2 by_cols, by_seq_len;  // fast divisors (fastdiv.glsl)
  uint first_id, view_rows;
VKAMP_PUSH_END(EmbeddingPush, p, 40)

VKAMP_SHADER(EmbeddingShader, embedding, 4, EmbeddingPush)  // ids, wte, wpe, y

#endif
