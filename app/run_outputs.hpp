// The files a run writes (--metrics, --report, --save, --checkpoint), and
// their names for a later run in the same process: vkamp-studio's "Start
// new run" must not write over the first run's files.
#pragma once
#include <string>

#include "app/run_options.hpp"

namespace vkamp::app {

// `path` for run 1; for run n > 1, "-run<n>" before the file's extension
// (m.jsonl -> m-run2.jsonl, dir/w -> dir/w-run2; a leading dot is part of
// the name, not an extension). Empty stays empty (no file).
std::string numbered_output(const std::string& path, unsigned run);

// `cfg` with every output file numbered for run `run`.
RunOptions with_numbered_outputs(RunOptions cfg, unsigned run);

}  // namespace vkamp::app
