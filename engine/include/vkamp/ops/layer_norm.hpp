// LayerNorm over the last dimension of a rows x cols matrix, with a weight
// (gamma) and bias (beta) of cols values, eps 1e-5 as PyTorch. Statistics
// in fp32 (a corrected two-pass mean and variance); inputs, outputs and
// gradients in the storage format. cols = 1 is allowed and degenerate, as
// in PyTorch: the variance is 0, so y = beta, dx = 0 and dgamma = 0.
// RMSNorm (Llama's, Zhang and Sennrich 2019) is the same kernels without
// the mean and the bias: y = x / sqrt(mean(x^2) + eps) * weight.
#pragma once
#include <cstdint>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

inline constexpr float kLayerNormEps = 1e-5f;

// y = (x - mean) / sqrt(var + eps) * gamma + beta, per row. mean_rstd: fp32,
// 2 * rows values, (mean, rstd) of each row, kept for the backward.
void layer_norm_forward(Sequence& seq, Format fmt, BufferView x, BufferView gamma, BufferView beta,
                        BufferView y, BufferView mean_rstd, uint32_t rows, uint32_t cols,
                        float eps = kLayerNormEps);

// dx (+= dx when accumulate) from dy and the forward's x and mean_rstd.
void layer_norm_backward_input(Sequence& seq, Format fmt, BufferView x, BufferView gamma, BufferView mean_rstd,
                               BufferView dy, BufferView dx, uint32_t rows, uint32_t cols, bool accumulate = false);
// dgamma = sum_r dy * xhat, dbeta = sum_r dy (column sums, fixed order; each
// added to its old values when its flag is set, as bias_add_backward).
void layer_norm_backward_params(Sequence& seq, Format fmt, BufferView x, BufferView mean_rstd, BufferView dy,
                                BufferView dgamma, BufferView dbeta, uint32_t rows, uint32_t cols,
                                bool accumulate_gamma = false, bool accumulate_beta = false);
// Both: dx is overwritten; dgamma and dbeta accumulate when asked.
void layer_norm_backward(Sequence& seq, Format fmt, BufferView x, BufferView gamma, BufferView mean_rstd,
                         BufferView dy, BufferView dx, BufferView dgamma, BufferView dbeta, uint32_t rows,
                         uint32_t cols, bool accumulate_params = false);

// RMSNorm: y = x * rstd * weight per row, rstd = 1 / sqrt(mean(x^2) + eps)
// in fp32. stats: as mean_rstd (2 * rows fp32 values), with mean 0.
void rms_norm_forward(Sequence& seq, Format fmt, BufferView x, BufferView weight, BufferView y, BufferView stats,
                      uint32_t rows, uint32_t cols, float eps);
// dx = rstd (g - xhat mean_c(g xhat)), g = dy * weight, xhat = x * rstd
// (+= dx when accumulate).
void rms_norm_backward_input(Sequence& seq, Format fmt, BufferView x, BufferView weight, BufferView stats,
                             BufferView dy, BufferView dx, uint32_t rows, uint32_t cols, bool accumulate = false);
// dweight = sum_r dy * xhat (a column sum in fixed order; += when accumulate).
void rms_norm_backward_weight(Sequence& seq, Format fmt, BufferView x, BufferView stats, BufferView dy,
                              BufferView dweight, uint32_t rows, uint32_t cols, bool accumulate = false);

}  // namespace vkamp::ops
