// The activations, each listed once. This file is valid C++ and GLSL:
// ops/activation.hpp builds ops::Activation and the name and letter tables
// from the list, and shaders/common/activation_fn.glsl builds the ACT_*
// codes and the dispatch of activate() and activate_grad() to each one's
// act_<name>() and act_<name>_grad().
//
//   X(Enumerator, SHADER_NAME, code, name, letter)
//     Enumerator   ops::Activation::Enumerator
//     SHADER_NAME  the shaders' constant ACT_<SHADER_NAME>
//     code         its value there and on the host (0 is ACT_NONE, the
//                  GEMM's plain store)
//     name         the YAML model files' `act:` and messages; the GLSL
//                  functions act_<name>() and act_<name>_grad()
//     letter       its suffix in model strings ("256r"); not k, p or s,
//                  which a conv layer's options take
//
// Adding an activation: a line here, act_<name>() and act_<name>_grad() in
// activation_fn.glsl, and its double reference in tests/support/reference.cpp
// (the activation, GEMM epilogue, graph fusion and model-string tests run
// every activation of this list).
#ifndef VKAMP_GPU_ABI_ACTIVATION_LIST_H
#define VKAMP_GPU_ABI_ACTIVATION_LIST_H

#define VKAMP_ACTIVATIONS(X)            \
  X(ReLU, RELU, 1u, relu, 'r')          \
  X(GELU, GELU, 2u, gelu, 'g')          \
  X(Tanh, TANH, 3u, tanh, 't')          \
  X(Sigmoid, SIGMOID, 4u, sigmoid, 'i') \
  X(SiLU, SILU, 5u, silu, 'w')

#endif
