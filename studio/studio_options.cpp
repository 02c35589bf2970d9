#include "studio_options.hpp"

#include <cstring>
#include <vector>

#include "app/cli.hpp"
#include "app/workloads.hpp"

namespace vkamp::ui {
namespace {

// --flag VALUE or --flag=VALUE; advances i past the value.
bool take(const char* flag, int argc, char** argv, int& i, std::string& value, std::string& error) {
  size_t n = std::strlen(flag);
  if (std::strncmp(argv[i], flag, n) != 0) return false;
  if (argv[i][n] == '=') {
    value = argv[i] + n + 1;
    return true;
  }
  if (argv[i][n] != 0) return false;
  if (i + 1 >= argc) {
    error = std::string(flag) + " needs a value";
    return true;
  }
  value = argv[++i];
  return true;
}

uint32_t parse_count(const std::string& v, const char* flag, uint32_t max, std::string& error) {
  char* end = nullptr;
  unsigned long n = std::strtoul(v.c_str(), &end, 10);
  if (v.empty() || *end || v[0] == '-' || n > max) {
    error = std::string(flag) + " takes a whole number up to " + std::to_string(max) + ", got \"" + v + "\"";
    return 0;
  }
  return uint32_t(n);
}

}  // namespace

std::string studio_usage() {
  std::string names;
  for (auto& w : app::workloads()) names += "\n    " + w.name + ": " + w.about;
  return "usage: vkamp-studio [flags]\n\n"
         "Trains a sample in mixed precision and shows the loss, the loss scale with the\n"
         "skipped steps, the gradient norm, the step time and the gradient exponent\n"
         "histograms against fp16's range, live. Starts fashion_mlp in fp16 with dynamic\n"
         "loss scaling unless told otherwise.\n\n"
         "App options:\n"
         "  --sample NAME          the job to train [default: fashion_mlp]; one of:" + names + "\n"
         "  --train FILE           train on your data instead, as vkamp-train does (with --model, --test, ...)\n"
         "  --paused               load the run but wait for Resume (or Step)\n"
         "  --frames N             quit after N frames (0 = when the window closes) [default: 0]\n"
         "  --until-step K         with --frames: start counting once K steps have trained\n"
         "                         (or the run has ended) [default: 0]\n"
         "  --screenshot FILE.png  write the last frame as a PNG before quitting\n"
         "  --probe FILE.json      write what the last frame plotted (for tests)\n"
         "  --size WxH             window size [default: 1600x1000]\n"
         "  --report FILE.png      at exit, draw the dashboard without the controls (offscreen)\n\n" +
         app::common_usage(app::find_workload("fashion_mlp").defaults, app::Rows::WithData);
}

StudioOptions parse_studio_options(int argc, char** argv) {
  StudioOptions o;
  std::vector<char*> rest{argv[0]};
  std::string v, err;
  for (int i = 1; i < argc && err.empty(); ++i) {
    if (take("--sample", argc, argv, i, v, err)) o.sample = v;
    else if (take("--screenshot", argc, argv, i, v, err)) o.screenshot = v;
    else if (take("--probe", argc, argv, i, v, err)) o.probe = v;
    else if (take("--frames", argc, argv, i, v, err)) o.frames = parse_count(v, "--frames", 1000000, err);
    else if (take("--until-step", argc, argv, i, v, err)) o.until_step = parse_count(v, "--until-step", 1u << 30, err);
    else if (take("--size", argc, argv, i, v, err)) {
      int w = 0, h = 0;
      char x = 0;
      if (std::sscanf(v.c_str(), "%d%c%d", &w, &x, &h) != 3 || x != 'x' || w < 320 || h < 240 || w > 8192 ||
          h > 8192)
        err = "--size takes WxH between 320x240 and 8192x8192, got \"" + v + "\"";
      o.width = w;
      o.height = h;
    } else if (std::strcmp(argv[i], "--paused") == 0) o.paused = true;
    else rest.push_back(argv[i]);
  }
  for (auto [flag, path] : {std::pair{"--screenshot", &o.screenshot}, std::pair{"--probe", &o.probe}}) {
    const char* ext = path == &o.screenshot ? ".png" : ".json";
    size_t n = std::strlen(ext);
    if (err.empty() && !path->empty() && (path->size() <= n || path->compare(path->size() - n, n, ext) != 0))
      err = std::string(flag) + " needs a file name ending in " + ext + ", got \"" + *path + "\"";
  }
  // --train FILE: vkamp-train's job over the user's data, with its defaults.
  for (char* a : rest)
    if (std::strcmp(a, "--train") == 0 || std::strncmp(a, "--train=", 8) == 0) o.sample = "vkamp-train";
  try {
    o.cfg = o.sample == "vkamp-train" ? app::user_data_defaults() : app::find_workload(o.sample).defaults;
  } catch (const vkamp::ConfigError& e) {
    if (err.empty()) err = e.what();
    o.sample = "fashion_mlp";
    o.cfg = app::find_workload(o.sample).defaults;
  }
  if (!err.empty()) {
    o.error = err;
    return o;
  }
  app::RunOptions cfg = o.cfg;
  // charlm takes the language-model flags (its GPT size by --n-layer and
  // the like, or `size:` in a --config file: --size is the window's here).
  const bool lm = o.sample != "vkamp-train" && app::find_workload(o.sample).language_model;
  try {
    o.help = app::parse_command_line(int(rest.size()), rest.data(), cfg,
                                     lm ? app::Rows::LanguageModel : app::Rows::WithData).help;
    o.cfg = cfg;
  } catch (const vkamp::ConfigError& e) {
    o.error = e.what();  // o.cfg keeps the sample's defaults
  }
  return o;
}

}  // namespace vkamp::ui
