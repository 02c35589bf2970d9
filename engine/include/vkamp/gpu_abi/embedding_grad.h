// embedding_grad.comp (ops::embedding_backward): the token or position
// gradient, as fp32 partials of chunk_rows rows each.
#ifndef VKAMP_INTERFACE_EMBEDDING_GRAD_H
#define VKAMP_INTERFACE_EMBEDDING_GRAD_H
#include "macros.h"

VKAMP_PUSH(EmbeddingGradPush)
  uint n;  // keys * cols: vocab * C (tokens) or T * C (positions), of this view
  uint cols, rows, seq_len, chunk_rows;
  uint first_id;  // tokens: the view's first row of dwte (a table past one binding)
VKAMP_PUSH_END(EmbeddingGradPush, p, 24)

VKAMP_SHADER(EmbeddingGradShader, embedding_grad, 3, EmbeddingGradPush)  // ids, dy, partial

#endif
