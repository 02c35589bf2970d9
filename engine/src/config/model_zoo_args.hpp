// Model Zoo's trainer arguments, section by section, and what vkamp does
// with each: the table model_zoo_layout.cpp reads a file against. A new
// argument vkamp understands is a row here. Internal to the engine's config.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace vkamp::config::model_zoo {

// How vkamp treats one Model Zoo argument.
enum class Use {
  Set,      // sets the flat key `what` to the value as written
  Note,     // no counterpart, no effect on what is computed: skipped with a note saying why (`what`)
  Refuse,   // no counterpart: an error saying why (`what`)
  Only,     // vkamp computes Model Zoo's value `only` and no other: that value is accepted, others refused (`what`)
  Special,  // read by the reader's own code (model_zoo_layout.cpp)
};
struct Arg {
  const char* name;
  Use use;
  const char* what = "";
  const char* only = nullptr;
};
using Args = std::vector<Arg>;

// trainer.init.optimizer: one cstorch optimizer class, by its name, with
// its constructor's arguments. The arguments a file leaves out take the
// class's defaults (cstorch.optim), not vkamp's.
struct OptimizerClass {
  const char* name;  // as cstorch spells it
  const char* kind;  // vkamp's optimizer
  Args args;
  std::vector<std::pair<const char*, const char*>> defaults;  // flat key, cstorch's default
};

// Each section's arguments (the comments in model_zoo_args.cpp say which
// Model Zoo class each one is).
extern const Args kPrecisionArgs;
extern const std::vector<OptimizerClass> kOptimizerClasses;
extern const Args kOptimizerArgs;  // the older layout's names
extern const Args kLoopArgs;
extern const Args kCheckpointArgs;
extern const Args kScheduleArgs;
extern const char* const kScheduleOwnsLr;  // the note on an optimizer's lr a schedule overrides
// The schedulers vkamp has, what they can express, and cstorch's others.
extern const std::vector<std::string> kVkampSchedules;
extern const char* const kScheduleShapes;
extern const std::vector<std::string> kOtherSchedules;
// The Trainer's sections vkamp reads, and those it does not use.
extern const std::vector<std::string> kInitRead, kInitUnused, kTrainerUnused;

}  // namespace vkamp::config::model_zoo
