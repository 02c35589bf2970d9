#include "vkamp/train/grad_exchange.hpp"

#include <chrono>
#include <cmath>

namespace vkamp::train {

GradExchange::GradExchange(dist::Communicator& comm, Buffer& grad_sum, Buffer& loss_values)
    : comm_(comm), grad_sum_(grad_sum), loss_values_(loss_values),
      host_((grad_sum.bytes() + loss_values.bytes()) / 4) {}

void GradExchange::run() {
  const auto t0 = std::chrono::steady_clock::now();
  const size_t g = grad_sum_.bytes() / 4, l = loss_values_.bytes() / 4;
  grad_sum_.read(host_.data(), g * 4);
  loss_values_.read(host_.data() + g, l * 4);
  for (size_t i = 0; i < g; ++i)
    if (!std::isfinite(host_[i])) {
      ++local_overflows_;
      break;
    }
  comm_.sum(host_.data(), host_.size());
  // Divide here, once, after the sum. Each rank's fp32 sum is
  // scale x (the mean gradient of its own M x B rows) (grad_multiplier is
  // scale / M): the sum over N ranks is N times the N x B-row mean, so
  // dividing by N gives the gradient one process at batch N x B computes,
  // and part B's unscale, clipping and norm see the same numbers as there.
  // Dividing before the sum instead would round every rank's share; after,
  // it is one rounding (none when N is a power of two). An inf or NaN on any
  // rank survives the sum, so every rank overflows together. The losses
  // are divided the same way: step_control then reports the global mean.
  const float n = float(comm_.size());
  for (float& v : host_) v /= n;
  grad_sum_.write(host_.data(), g * 4);
  loss_values_.write(host_.data() + g, l * 4);
  ++exchanges_;
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace vkamp::train
