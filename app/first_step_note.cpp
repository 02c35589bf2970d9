#include "app/first_step_note.hpp"

#include "vkamp/context.hpp"

namespace vkamp::app {

std::string first_step_note(const Context& ctx) {
  return ctx.pipeline_cache_warm() ? "" : "compiling pipelines for the first step";
}

}  // namespace vkamp::app
