// vkamp-studio's command line: the samples' flags plus the app's own, all
// through the one parser (app/flags.hpp), before any window opens.
#pragma once
#include <cstdint>
#include <string>

#include "app/run_options.hpp"

namespace vkamp::ui {

struct StudioOptions {
  std::string sample = "fashion_mlp";
  app::RunOptions cfg;      // the sample's defaults, then the flags
  std::string screenshot;   // --screenshot FILE.png: the last frame
  uint32_t frames = 0;      // --frames N: quit after N frames (0 = run until closed)
  uint32_t until_step = 0;  // --until-step K: start counting frames once K steps are in
  std::string probe;        // --probe FILE.json: what the last frame plotted (tests)
  bool paused = false;      // --paused: load the run but wait for Start
  bool finetune = false;    // --finetune: vkamp-finetune's job (--model DIR --data FILE ...)
  int width = 1600, height = 1000;
};

// Parses the command line into `o`. Returns -1 when the studio goes on;
// otherwise the exit status, with what to say printed: 0 after --help or
// --version (stdout), 2 after a bad flag or settings file (stderr).
int parse_studio_options(int argc, char** argv, StudioOptions& o);

}  // namespace vkamp::ui
