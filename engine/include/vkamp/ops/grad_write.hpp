// Where a backward kernel puts one of the gradients it computes: nowhere
// (the input needs none), over the old value, or added to it (another
// consumer already wrote part of the sum).
#pragma once

namespace vkamp::ops {

enum class GradWrite { Skip, Write, Add };

}  // namespace vkamp::ops
