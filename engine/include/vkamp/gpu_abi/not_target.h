// A label with this bit set is no target: its row adds nothing to the loss
// or the gradient, and the mean is taken over the other rows (Hugging
// Face's ignore_index, -100, in a uint32). In a token stream
// (data::HostData::windows) the bit marks a token that is read as input
// (its id in the low bits) but not predicted: a prompt's tokens when only
// the completion is trained. Valid GLSL and C++.
#ifndef VKAMP_INTERFACE_NOT_TARGET_H
#define VKAMP_INTERFACE_NOT_TARGET_H

#define VKAMP_NOT_TARGET 0x80000000u

#endif
