// The loss a model trains with: softmax cross-entropy over class labels, or
// mean squared error against targets (HostData's labels or targets).
#pragma once

namespace vkamp::train {

enum class LossKind { SoftmaxXent, MSE };

}  // namespace vkamp::train
