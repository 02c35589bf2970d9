// The macros that make a shader's interface header in vkamp/gpu_abi/ valid
// GLSL and C++, so that a shader's host interface is written once: its
// push-constant block, its name and how many buffers it binds. The shader
// includes the header as "vkamp/gpu_abi/<name>.h" (glslang's include path
// has engine/include, and its depfile makes an edit rebuild the SPIR-V), and
// so does the engine: the two cannot drift.
//
//   VKAMP_PUSH(ScalePush)                  // GLSL: layout(push_constant) uniform Push {
//     uint n;                              // C++:  namespace vkamp::shader { struct ScalePush {
//     float factor;
//   VKAMP_PUSH_END(ScalePush, p, 8)        // GLSL: } p;   C++: }; static_assert(sizeof == 8) }
//   VKAMP_SHADER(ScaleShader, scale, 3, ScalePush)  // C++ only: the kernel's typed handle
//
// Members are GLSL scalars and vectors: uint, float, and uvec2/vec2/uvec4/
// vec4, which C++ aligns as std430 push constants do (2-vectors to 8 bytes,
// 4-vectors to 16); 3-vectors, bools and arrays are left out (their C++
// layout would differ). The size in VKAMP_PUSH_END is the block's std430
// size, checked on the C++ side. The GLSL block keeps the name Push, and the
// instance the name the shader reads it by.
//
// VKAMP_SHADER(Handle, file, buffers, Push) declares, in C++,
//   struct vkamp::shader::Handle {
//     static constexpr const char* name = "file";    // shaders/<file>.comp
//     static constexpr uint32_t buffers = ...;       // bindings 0..buffers-1
//     static constexpr bool per_format = true;       // built per storage format
//     using Push = ...;                              // void: no push constants
//   };
// for a shader compiled once per storage format (FORMATS on its line in
// ops.cmake, or in shaders/CMakeLists.txt for the training step's); VKAMP_SHADER_ONE_BUILD for one compiled once.
// Context::kernel<Handle>() builds it and returns a TypedKernel<Push>,
// which Sequence::dispatch runs only with a Push (engine/include/vkamp/).
#ifndef VKAMP_INTERFACE_MACROS_H
#define VKAMP_INTERFACE_MACROS_H

#ifdef __cplusplus
#include <cstdint>

namespace vkamp::shader {
using uint = uint32_t;
struct alignas(8) uvec2 {
  uint32_t x, y;
};
struct alignas(8) vec2 {
  float x, y;
};
struct alignas(16) uvec4 {
  uint32_t x, y, z, w;
};
struct alignas(16) vec4 {
  float x, y, z, w;
};
}  // namespace vkamp::shader

#define VKAMP_PUSH(Type)   \
  namespace vkamp::shader { \
  struct Type {
#define VKAMP_PUSH_END(Type, instance, bytes)                                                    \
  };                                                                                             \
  static_assert(sizeof(Type) == (bytes), #Type ": the push-constant block is " #bytes " bytes"); \
  }
#define VKAMP_SHADER_HANDLE(Handle, file, nbuffers, PushType, formats) \
  namespace vkamp::shader {                                            \
  struct Handle {                                                      \
    static constexpr const char* name = #file;                         \
    static constexpr uint32_t buffers = (nbuffers);                    \
    static constexpr bool per_format = (formats);                      \
    using Push = PushType;                                             \
  };                                                                   \
  }
#define VKAMP_SHADER(Handle, file, nbuffers, PushType) \
  VKAMP_SHADER_HANDLE(Handle, file, nbuffers, PushType, true)
#define VKAMP_SHADER_ONE_BUILD(Handle, file, nbuffers, PushType) \
  VKAMP_SHADER_HANDLE(Handle, file, nbuffers, PushType, false)

#else  // GLSL

#define VKAMP_PUSH(Type) layout(push_constant) uniform Push {
#define VKAMP_PUSH_END(Type, instance, bytes) } instance;
#define VKAMP_SHADER(Handle, file, nbuffers, PushType)
#define VKAMP_SHADER_ONE_BUILD(Handle, file, nbuffers, PushType)

#endif
#endif
