# Every op, one line each (cmake/Ops.cmake says what a line finds by name:
# shader, kernel, graph definition, tests). A new op is its own files plus
# one line here. The graph ops are registered in this order (op_names()).
vkamp_add_op(convert FORMATS fp16 fp16s bf16 cb16)  # the executor's cast step (graph/ops/cast.cpp)
vkamp_add_op(scale)
# ggml's quantized types (GGUF weights) to fp32: dequant.glsl's quant_value over a whole tensor.
vkamp_add_op(dequantize SHADERS dequantize:once)
vkamp_add_op(reduce SHADERS sumsq sum:once)
vkamp_add_op(gemm SHADERS gemm:subgroup:texel:quant gemm_reduce)
# The tensor-core GEMM: fp16 operands only (GL_NV_cooperative_matrix has no
# bf16), its multiply-accumulate emulated in the plain build.
vkamp_add_op(gemm_mma SHADERS gemm_mma:coopmat FORMATS fp16)
vkamp_add_op(bias SHADERS bias_add bias_grad)
vkamp_add_op(losses SHADERS softmax_xent softmax_xent_grad xent_mean:once mse_grad accuracy)
vkamp_add_op(conv SHADERS im2col col2im conv_direct)
vkamp_add_op(linear)
# A linear layer with a LoRA adapter (fine-tuning a frozen base).
vkamp_add_op(lora)
vkamp_add_op(conv2d)
vkamp_add_op(pool SHADERS pool pool_grad GRAPH max_pool avg_pool)
vkamp_add_op(flatten)
vkamp_add_op(activation)
vkamp_add_op(add)
vkamp_add_op(concat)
vkamp_add_op(layer_norm SHADERS layer_norm layer_norm_grad layer_norm_param_grad)
# RMSNorm: LayerNorm's kernels without the mean and the bias (its graph op; tests in test_layer_norm.cpp).
vkamp_add_op(rms_norm)
# Llama's rotary embedding and grouped-query layout before attention.
vkamp_add_op(rope)
# Gated linear units: Llama's SwiGLU MLP.
vkamp_add_op(glu)
vkamp_add_op(embedding SHADERS embedding:quant embedding_grad)
vkamp_add_op(attention SHADERS attention_softmax attention_softmax_grad)
# Attention fused FlashAttention-style (VKAMP_ATTENTION=fused): its kernel, no graph op of its own.
vkamp_add_op(attention_fused SHADERS attention_fused attention_fused_grad)
# The fused attention on 16 x 16 fragments (VKAMP_ATTENTION=mma): fp16 only, emulated in the plain build.
vkamp_add_op(attention_mma SHADERS attention_mma:coopmat attention_mma_grad:coopmat FORMATS fp16)
vkamp_add_op(batch_norm SHADERS batch_norm batch_norm_stats batch_norm_merge:once batch_norm_grad_sums
             batch_norm_param_grad batch_norm_grad)
vkamp_add_op(dropout)
