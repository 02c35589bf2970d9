// What a training run says while its first step runs. That step compiles
// every pipeline the run uses (kernels compile on first use), and with a
// cold cache it takes tens of seconds on a CPU driver (17 s for the
// studio's first step on lavapipe) with no record to show for it: the
// studio sat at "training, step 0" and the progress bar at 0% saying
// nothing. vkamp-generate prints the same reason as a note.
#pragma once
#include <string>

namespace vkamp {
class Context;
}

namespace vkamp::app {

// "compiling pipelines for the first step" while no pipeline was cached for this
// device when `ctx` opened; "" when the cache was warm (the first step is
// then no slower than the rest). On lavapipe the note always shows: its
// pipeline cache holds nothing (Mesa's own shader cache does the caching,
// out of vkamp's sight), and its first step compiles or loads every
// pipeline either way.
std::string first_step_note(const Context& ctx);

}  // namespace vkamp::app
