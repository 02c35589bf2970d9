// gather.comp and gather_labels.comp (train::BatchFeeder): copy micro-batch
// `micro`'s rows (`width` values each) out of the staged or resident data.
// gather copies values in the storage format; gather_labels copies uint32
// rows and is built once.
#ifndef VKAMP_INTERFACE_GATHER_H
#define VKAMP_INTERFACE_GATHER_H
#include "macros.h"

VKAMP_PUSH(GatherPush)
  uint rows, width, slots, micro;
VKAMP_PUSH_END(GatherPush, p, 16)

VKAMP_SHADER(GatherShader, gather, 4, GatherPush)  // state, ids, src, dst
VKAMP_SHADER_ONE_BUILD(GatherLabelsShader, gather_labels, 4, GatherPush)  // state, ids, src, dst

#endif
