#include "studio_options.hpp"

#include <cstdio>
#include <vector>

#include "app/cli.hpp"
#include "app/finetune_job.hpp"
#include "app/workloads.hpp"

namespace vkamp::ui {
namespace {

using Row = config::Setting<StudioOptions>;
const char* kStudioGroup = "Studio";

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A file the studio writes at exit: its name must end in `ext`.
Row output_row(const char* key, const char* value, const char* text, std::string StudioOptions::*field,
               const char* ext) {
  Row r = config::text<StudioOptions>(key, {kStudioGroup, value, text}, [field](auto& o) -> auto& { return o.*field; },
                                      "none");
  r.check = [field, ext, key](const StudioOptions& o) {
    if (!(o.*field).empty() && !ends_with(o.*field, ext))
      throw ConfigError(config::flag_of(key) + " needs a file name ending in " + ext + ", got \"" + o.*field + "\"");
  };
  return r;
}

std::vector<Row> studio_rows() {
  std::string names;
  for (const auto& w : app::workloads()) names += (names.empty() ? "" : ", ") + w.name;
  static const std::string sample_help = "the job to train: " + names;
  Row sample = config::row<StudioOptions>("sample", {kStudioGroup, "NAME", sample_help.c_str()});
  sample.parse = [](StudioOptions& o, const std::string& v, const std::string&) {
    app::find_workload(v);  // throws ConfigError listing the jobs
    o.sample = v;
  };
  sample.show = [](const StudioOptions&) { return std::string("fashion_mlp"); };
  Row size = config::row<StudioOptions>("size", {kStudioGroup, "WxH", "window size"});
  size.parse = [](StudioOptions& o, const std::string& v, const std::string& l) {
    int w = 0, h = 0;
    char x = 0, rest = 0;
    if (std::sscanf(v.c_str(), "%d%c%d%c", &w, &x, &h, &rest) != 3 || x != 'x' || w < 320 || h < 240 || w > 8192 ||
        h > 8192)
      config::fail(l, "takes WxH between 320x240 and 8192x8192, got \"" + v + "\"");
    o.width = w;
    o.height = h;
  };
  size.show = [](const StudioOptions& o) { return std::to_string(o.width) + "x" + std::to_string(o.height); };
  Row frames = config::count<StudioOptions>(
      "frames", {kStudioGroup, "N", "quit after N frames (0 = when the window closes)"}, VKAMP_FIELD(frames));
  frames.check = [](const StudioOptions& o) {
    if (o.frames > 1000000) throw ConfigError("--frames takes a whole number up to 1000000");
  };
  return {
      sample,
      config::toggle<StudioOptions>("paused", {kStudioGroup, "", "load the run but wait for Resume (or Step)"},
                                    VKAMP_FIELD(paused)),
      config::toggle<StudioOptions>("finetune",
                                    {kStudioGroup, "", "fine-tune a Hugging Face model or GGUF file as vkamp-finetune "
                                                       "does (--model DIR|FILE.gguf --data FILE --out DIR, LoRA by default)"},
                                    VKAMP_FIELD(finetune)),
      frames,
      config::count<StudioOptions>(
          "until_step",
          {kStudioGroup, "K", "with --frames: start counting once K steps have trained (or the run has ended)"},
          VKAMP_FIELD(until_step)),
      output_row("screenshot", "FILE.png", "write the last frame as a PNG before quitting", &StudioOptions::screenshot,
                 ".png"),
      output_row("probe", "FILE.json", "write what the last frame plotted (for tests)", &StudioOptions::probe,
                 ".json"),
      size,
  };
}

const std::vector<Row>& rows() {
  static const std::vector<Row> r = studio_rows();
  return r;
}

// The studio's flags over `o`, then the job's run rows over o.cfg.
std::vector<app::Flag> all_flags(StudioOptions& o, const StudioOptions& defaults, app::Rows which) {
  std::vector<app::Flag> flags =
      app::with_extra(app::bind_rows(rows(), o, defaults), app::run_flags(o.cfg, defaults.cfg, which));
  for (app::Flag& f : flags)
    if (f.key == "report") f.help.front().meaning = "at exit, draw the dashboard without the controls (offscreen)";
  return flags;
}

const char* kAbout =
    "Trains a sample in mixed precision and shows the loss, the loss scale with the\n"
    "skipped steps, the gradient norm, the step time and the gradient exponent\n"
    "histograms against fp16's range, live. Starts fashion_mlp in fp16 with dynamic\n"
    "loss scaling unless told otherwise; --train FILE trains your data instead, as\n"
    "vkamp-train does (with --model, --test, ...); --finetune fine-tunes a Hugging\n"
    "Face folder or GGUF file as vkamp-finetune does (--model DIR|FILE.gguf --data FILE\n"
    "--out DIR ...).";

app::Rows rows_of(const std::string& sample) {
  if (sample == "vkamp-train") return app::Rows::WithData;
  if (sample == "vkamp-finetune") return app::Rows::FineTune;
  // charlm takes the language-model flags (its GPT size by --n-layer and the
  // like, or `size:` in a --config file: --size is the window's here).
  return app::find_workload(sample).language_model ? app::Rows::LanguageModel : app::Rows::WithData;
}

}  // namespace

int parse_studio_options(int argc, char** argv, StudioOptions& o) {
  app::Program program{"vkamp-studio", "[flags]", kAbout, true, app::kConfigEpilogue};
  try {
    // First the job (--sample, or --train for vkamp-train's), over every
    // flag the studio may take: its defaults and rows depend on it.
    StudioOptions first;
    app::RunOptions lm_scratch, ft_scratch;
    std::vector<app::Flag> any = all_flags(first, first, app::Rows::WithData);
    for (app::Flag& f : app::run_flags(lm_scratch, lm_scratch, app::Rows::LanguageModel)) any.push_back(std::move(f));
    for (app::Flag& f : app::run_flags(ft_scratch, ft_scratch, app::Rows::FineTune)) any.push_back(std::move(f));
    const app::ParsedFlags found = app::split_flags(program, argc, argv, any);
    std::string sample = "fashion_mlp";
    bool user_data = false, finetune = false;
    for (const auto& it : found.items) {
      if (it.flag->key == "sample") sample = it.value;
      user_data |= it.flag->key == "train";
      finetune |= it.flag->key == "finetune";
    }
    // --help is read before any other flag: --finetune --help lists the fine-tuning flags.
    for (int i = 1; found.help && i < argc; ++i) finetune |= std::string(argv[i]) == "--finetune";
    if (user_data && finetune) throw ConfigError("--train and --finetune both given: train your data, or fine-tune a model");
    if (!found.help && !found.version) app::find_workload(sample);  // an unknown job: ConfigError
    if (found.help || found.version) sample = "fashion_mlp";
    o.sample = user_data ? "vkamp-train" : finetune ? "vkamp-finetune" : sample;
    o.cfg = user_data  ? app::user_data_defaults()
            : finetune ? app::finetune_defaults(argc, argv)
                       : app::find_workload(sample).defaults;
    const StudioOptions defaults = o;
    if (found.help) {
      std::fputs(app::usage(program, all_flags(o, defaults, rows_of(o.sample))).c_str(), stdout);
      return 0;
    }
    if (found.version) {
      std::printf("%s\n", app::version_line(program.name).c_str());
      return 0;
    }
    const std::string job = o.sample;
    app::parse_command_line(argc, argv, o.cfg, rows_of(job), app::bind_rows(rows(), o, defaults));
    o.sample = job;  // --sample's value, or vkamp-train's job for --train
    return -1;
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "vkamp-studio: %s\n(see vkamp-studio --help)\n", e.what());
    return 2;
  }
}

}  // namespace vkamp::ui
