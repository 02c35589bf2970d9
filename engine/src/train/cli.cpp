// Command-line flags shared by every training binary. A flag --some-name VALUE
// is the YAML key some_name, applied through apply_setting(); the few flags
// that are not keys (--config, --loss-scale, --no-progress, --help) are
// handled here.
#include "vkamp/train/cli.hpp"

#include <algorithm>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

namespace vkamp::train {
namespace {

std::string fmt(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string key_to_flag(std::string_view key) {
  std::string f = "--";
  for (char c : key) f += (c == '_') ? '-' : c;
  return f;
}

std::string flag_to_key(std::string_view name) {  // name without the leading "--"
  std::string k;
  for (char c : name) k += (c == '-') ? '_' : c;
  return k;
}

// Flags that take no value (--flag=VALUE still sets them explicitly).
struct BoolFlag {
  const char* name;
  const char* key;
  bool value;
};
constexpr BoolFlag kBoolFlags[] = {
    {"resume", "resume", true},
    {"no-resume", "resume", false},
    {"progress", "progress", true},
    {"no-progress", "progress", false},
    {"consecutive-hysteresis", "consecutive_hysteresis", true},
    {"no-consecutive-hysteresis", "consecutive_hysteresis", false},
};

// Flags that are not spelled like their key.
constexpr std::pair<const char*, const char*> kRenamed[] = {
    {"loss-scale", "loss_scaling_factor"},
};

const std::vector<std::string>& all_flags() {
  static const std::vector<std::string> flags = [] {
    std::vector<std::string> f = {"config", "help"};
    for (const auto& [name, key] : kRenamed) f.emplace_back(name);
    for (const BoolFlag& b : kBoolFlags) f.emplace_back(b.name);
    for (const std::string& k : setting_keys()) f.push_back(key_to_flag(k).substr(2));
    return f;
  }();
  return flags;
}

[[noreturn]] void unknown_flag(const std::string& arg, const std::string& name) {
  std::string msg = "unknown flag '" + arg + "'";
  std::string hint = closest_match(name, all_flags());
  if (hint.empty()) {
    // Another tool's name (--growth-interval), or a key spelled with '_'.
    std::string key = suggest_key(flag_to_key(name));
    if (!key.empty()) hint = key_to_flag(key).substr(2);
  }
  if (!hint.empty()) msg += " (did you mean --" + hint + "?)";
  throw ConfigError(msg);
}

struct Item {
  std::string flag;  // as the user wrote it, e.g. "--lr"
  std::string key;   // the YAML key ("" for --config)
  std::string value;
};

}  // namespace

std::string common_usage(const TrainConfig& d) {
  struct Row {
    std::string flag, meaning, def;
  };
  struct Group {
    const char* title;
    std::vector<Row> rows;
  };
  const std::string no_default;  // rows that show no default
  const std::vector<Group> groups = {
      {"General",
       {{"--config FILE", "YAML file of `key: value` lines, applied before every other flag", "none"},
        {"--device SEL", "GPU index or a substring of its name", "the first suitable GPU"},
        {"--precision P", "fp32 | float16 | bfloat16 | cbfloat16 (also fp16, bf16, cb16)",
         format_name(d.precision)},
        {"--fp16-type T", "Cerebras name: float16 | bfloat16 | cbfloat16 (sets --precision)", no_default},
        {"--seed N", "random seed for initialization and shuffling", std::to_string(d.seed)},
        {"-h, --help", "print this help and exit", no_default}}},
      {"Loss scaling (DESIGN.md section 5; defaults are PyTorch GradScaler's)",
       {{"--loss-scale S", "dynamic | none | a fixed positive scale (= loss_scaling_factor)",
         scale_mode_name(d.scaler.mode)},
        {"--loss-scaling-factor S", "Cerebras name for --loss-scale", no_default},
        {"--initial-loss-scale X", "starting scale of dynamic scaling", fmt(d.scaler.initial_scale)},
        {"--steps-per-increase N", "clean steps before the scale grows (growth interval)",
         std::to_string(d.scaler.growth_interval)},
        {"--growth-factor X", "scale multiplier on growth (> 1)", fmt(d.scaler.growth_factor)},
        {"--backoff-factor X", "scale multiplier on an overflow, in (0, 1)", fmt(d.scaler.backoff_factor)},
        {"--min-loss-scale X", "the scale never goes below this", fmt(d.scaler.min_scale)},
        {"--max-loss-scale X", "the scale never grows above this", fmt(d.scaler.max_scale) + " (fp32 max)"},
        {"--hysteresis N", "overflows tolerated before a backoff (DeepSpeed)",
         std::to_string(d.scaler.hysteresis)},
        {"--consecutive-hysteresis", "every clean step refills the hysteresis (DeepSpeed), not only a growth",
         d.scaler.consecutive_hysteresis ? "on" : "off"},
        {"--overflow-policy P", "on an overflowed step: skip | apply | retry (recompute at the lower scale)",
         policy_name(d.scaler.policy)},
        {"--max-retries N", "retry policy: recomputations of one batch",
         std::to_string(d.scaler.max_retries)},
        {"--fail-after-overflows N", "stop after N consecutive overflows at the minimum scale (0 = never)",
         std::to_string(d.scaler.fail_after)},
        {"--histogram-interval N", "gradient exponent histograms every N steps (0 = never)",
         std::to_string(d.scaler.histogram_interval)}}},
      {"Gradient clipping (after unscaling; set at most one)",
       {{"--max-gradient-norm X", "clip the global L2 norm of the gradients to X (0 = off)",
         fmt(d.clip.max_norm)},
        {"--max-gradient-value X", "clamp every gradient element to [-X, X] (0 = off)",
         fmt(d.clip.max_value)}}},
      {"Optimizer",
       {{"--optimizer O", "sgd | adam | adamw", optimizer_name(d.optimizer.kind)},
        {"--lr X", "learning rate (also --learning-rate)", fmt(d.optimizer.lr)},
        {"--momentum X", "SGD momentum, in [0, 1) (0 = plain SGD)", fmt(d.optimizer.momentum)},
        {"--beta1 X", "Adam first-moment decay, in [0, 1)", fmt(d.optimizer.beta1)},
        {"--beta2 X", "Adam second-moment decay, in [0, 1)", fmt(d.optimizer.beta2)},
        {"--eps X", "Adam epsilon (> 0)", fmt(d.optimizer.eps)},
        {"--weight-decay X", "weight decay (decoupled for adamw)", fmt(d.optimizer.weight_decay)},
        {"--lr-schedule S", "constant | step | cosine", schedule_name(d.optimizer.schedule)},
        {"--warmup-steps N", "cosine schedule: update k < N uses lr (k+1)/N, then cosine from lr to 0 at the last update",
         std::to_string(d.optimizer.warmup_steps)},
        {"--lr-step-size N", "step schedule: multiply the rate by gamma every N steps",
         std::to_string(d.optimizer.step_size)},
        {"--lr-gamma X", "step schedule: the multiplier", fmt(d.optimizer.gamma)}}},
      {"Training loop",
       {{"--epochs N", "passes over the training set", std::to_string(d.epochs)},
        {"--batch N", "samples per micro-batch (also --batch-size)", std::to_string(d.batch)},
        {"--grad-accum N", "micro-batches per optimizer step", std::to_string(d.grad_accum)},
        {"--data DIR", "dataset directory", "the sample's default"}}},
      {"Output and checkpoints",
       {{"--metrics FILE", "write one JSON Lines record per step", "none"},
        {"--report FILE.png", "draw the dashboard of the run into a PNG at the end (no display needed)", "none"},
        {"--checkpoint FILE", "checkpoint file (model, optimizer and scaler state)", "none"},
        {"--checkpoint-every N", "steps between checkpoints (0 = only at the end; a failed run never overwrites one)",
         std::to_string(d.checkpoint_every)},
        {"--resume", "continue from --checkpoint FILE (--no-resume to turn off)", "off"},
        {"--no-progress", "no progress bar on stderr (--progress to turn it on)",
         d.progress ? "progress bar shown" : "no progress bar"}}},
      {"Weights (safetensors, PyTorch names and layouts)",
       {{"--save FILE.safetensors", "write the trained weights at the end of a successful run", "none"},
        {"--save-dtype T", "fp32 | fp16 | bf16: the dtype of the saved weights", format_name(d.save_dtype)},
        {"--init-from FILE",
         "start from these weights (a file --save wrote, or a PyTorch state_dict; --resume replaces them)",
         "seeded initialization"}}},
      {"Testing",
       {{"--inject-overflow LIST", "write an inf into a gradient at these optimizer steps, e.g. 120,300-305",
         "none"}}},
  };

  size_t width = 0;
  for (const Group& g : groups)
    for (const Row& r : g.rows) width = std::max(width, r.flag.size());
  width += 2;

  std::ostringstream os;
  os << "Options (FLAG VALUE and FLAG=VALUE both work):\n";
  for (const Group& g : groups) {
    os << "\n" << g.title << ":\n";
    for (const Row& r : g.rows) {
      os << "  " << r.flag << std::string(width - r.flag.size(), ' ') << r.meaning;
      if (!r.def.empty()) os << " [default: " << r.def << "]";
      os << "\n";
    }
  }
  os << "\nEvery flag --some-name VALUE is also the YAML key `some_name: VALUE` for --config\n"
        "(--loss-scale is loss_scaling_factor, --no-progress is `progress: false`).\n"
        "Flags override the file wherever --config appears on the command line.\n";
  return os.str();
}

CliResult parse_command_line(int argc, char** argv, TrainConfig& cfg) {
  CliResult result;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i] ? argv[i] : "";
    if (a == "--help" || a == "-h") {
      result.help = true;
      return result;  // help wins over anything else on the line
    }
  }

  // Pass 1: split into (flag, value) items, checking every flag's spelling
  // and value before anything is applied.
  std::vector<std::string> configs;
  std::vector<Item> items;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i] ? argv[i] : "";
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      std::string msg = "unexpected argument '" + arg + "': options are --flag VALUE";
      if (i > 1)
        for (const BoolFlag& bf : kBoolFlags)
          if (std::string_view(argv[i - 1]) == std::string("--") + bf.name)
            msg += " and --" + std::string(bf.name) + " takes no value";
      throw ConfigError(msg);
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const std::string flag = "--" + name;
    const bool inline_value = eq != std::string::npos;
    const std::string inline_text = inline_value ? arg.substr(eq + 1) : std::string();

    bool is_bool = false;
    for (const BoolFlag& b : kBoolFlags) {
      if (name != b.name) continue;
      is_bool = true;
      if (inline_value) {
        // --resume=false / --progress=true set the value given; the --no-
        // spellings take none.
        if (!b.value) throw ConfigError(flag + " takes no value (got '" + arg + "')");
        items.push_back({flag, b.key, inline_text});
      } else {
        items.push_back({flag, b.key, b.value ? "true" : "false"});
      }
    }
    if (is_bool) continue;

    std::string key;
    if (name == "config") {
      key = "";
    } else {
      for (const auto& [renamed, k] : kRenamed)
        if (name == renamed) key = k;
      if (key.empty()) {
        const std::string k = flag_to_key(name);
        bool known = false;
        // Only the dashed spelling is a flag: --max_gradient_norm is a typo.
        if (name.find('_') == std::string::npos)
          for (const std::string& s : setting_keys()) known = known || s == k;
        if (!known) unknown_flag(inline_value ? flag : arg, name);
        key = k;
      }
    }

    std::string value;
    if (inline_value) {
      value = inline_text;
    } else {
      if (i + 1 >= argc || std::string_view(argv[i + 1] ? argv[i + 1] : "").substr(0, 2) == "--")
        throw ConfigError(flag + ": missing value");
      value = argv[++i];
    }
    if (key.empty()) {
      if (value.empty()) throw ConfigError(flag + ": missing file name");
      configs.push_back(value);
    } else {
      items.push_back({flag, key, value});
    }
  }

  // Pass 2: the files, then the flags in order, then the cross-field checks.
  for (const std::string& file : configs) apply_config_file(file, cfg);
  for (const Item& it : items) apply_setting(it.key, it.value, cfg, it.flag);
  validate(cfg);
  return result;
}

}  // namespace vkamp::train
