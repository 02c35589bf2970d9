// A 1-D grid of 256-wide workgroups that strides over n elements, so any n
// fits in the 65535-workgroup limit (the host caps the group count).
#ifndef VKAMP_ELEMENTWISE_GLSL
#define VKAMP_ELEMENTWISE_GLSL
layout(local_size_x = 256) in;
#define FOR_EACH_ELEMENT(i, n) \
  for (uint i = gl_GlobalInvocationID.x; i < (n); i += gl_NumWorkGroups.x * 256u)
#endif
