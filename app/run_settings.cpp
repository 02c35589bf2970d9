// The application's settings, one row each: where a run's files go and
// which GPU it uses. run_settings() puts them among the training rows
// (training_settings.cpp) by help group, so the command line, settings
// files and --help see one table.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <string_view>

#include "app/finetune_settings.hpp"
#include "app/monitor.hpp"
#include "app/run_options.hpp"
#include "vkamp/data/csv.hpp"
#include "vkamp/config/settings_file.hpp"

namespace vkamp::app {
namespace {

using config::Help;
using Row = config::Setting<RunOptions>;

bool ends_with_png(const std::string& s) {
  const char* tail = ".png";
  const size_t n = std::strlen(tail);
  return s.size() >= n &&
         std::equal(s.end() - n, s.end(), tail, [](char a, char b) { return std::tolower(a) == b; });
}

// The picture is a PNG; a typo'd name should fail now, not after training.
Row report_row() {
  Row s = config::text<RunOptions>(
      "report",
      {config::kOutputGroup, "FILE.png", "draw the dashboard of the run into a PNG at the end (no display needed)"},
      VKAMP_FIELD(report_path), "none");
  s.check = [](const RunOptions& o) {
    if (!o.report_path.empty() && !ends_with_png(o.report_path))
      throw vkamp::ConfigError(config::names("report") +
                               " writes a PNG picture: give a file name ending in .png (got \"" + o.report_path +
                               "\")");
  };
  return s;
}

// safetensors holds F32, F16 and BF16; cb16 has no PyTorch dtype.
Row save_dtype_row() {
  Row s = config::row<RunOptions>("save_dtype",
                                 {config::kWeightsGroup, "T", "fp32 | fp16 | bf16: the dtype of the saved weights"});
  s.parse = [](RunOptions& o, const std::string& v, const std::string& l) {
    auto f = parse_format(config::lower(v));
    if (!f || *f == Format::CB16) config::fail(l, "unknown value '" + v + "' (expected fp32 | fp16 | bf16)");
    o.save_dtype = *f;
  };
  s.show = [](const RunOptions& o) { return std::string(format_name(o.save_dtype)); };
  s.check = [](const RunOptions& o) {
    if (o.save_dtype != Format::F32 && o.save_dtype != Format::F16 && o.save_dtype != Format::BF16)
      throw vkamp::ConfigError(config::names("save_dtype") + " must be fp32, fp16 or bf16 (got " +
                               format_name(o.save_dtype) + ")");
  };
  return s;
}

// How a run reports and when it stops early: --quiet, --profile, --dry-run,
// --early-stop (its monitor and min delta) and --save-best (app/run_loop.hpp).
std::vector<Row> report_and_stop_rows() {
  Row save_best = config::toggle<RunOptions>(
      "save_best",
      {config::kWeightsGroup, "",
       "--save (a fine-tune's --out) writes the weights of the best held-out evaluation by --early-stop-monitor, "
       "not the last (needs --save or --out, and a held-out set)"},
      VKAMP_FIELD(save_best));
  save_best.check = [](const RunOptions& o) {
    if (o.save_best && o.save_path.empty() && o.ft.out_dir.empty())
      throw vkamp::ConfigError(config::names("save_best") +
                               " chooses which weights --save writes: give --save FILE.safetensors too (or, "
                               "fine-tuning, --out DIR)");
  };
  return {
      config::toggle<RunOptions>("quiet",
                                {config::kOutputGroup, "",
                                 "print the final summary only: no progress bar, no per-epoch lines"},
                                VKAMP_FIELD(quiet)),
      config::toggle<RunOptions>("profile",
                                {config::kOutputGroup, "",
                                 "add GPU time per kernel and the commands per step to the summary"},
                                VKAMP_FIELD(profile)),
      config::toggle<RunOptions>("dry_run",
                                {config::kOutputGroup, "",
                                 "load the data, build the model and record its step, print the device memory "
                                 "that takes, and exit without training (does it fit the card?)"},
                                VKAMP_FIELD(dry_run)),
      config::count<RunOptions>("early_stop",
                               {config::kLoopGroup, "N",
                                "stop after N held-out evaluations without improvement of --early-stop-monitor (0 "
                                "= never; needs a held-out set)"},
                               VKAMP_FIELD(early_stop)),
      config::choice<RunOptions>("early_stop_monitor",
                                {config::kLoopGroup, "M",
                                 "val_loss | val_accuracy | val_mse: what --early-stop and --save-best watch (lower "
                                 "loss and MSE, higher accuracy is better)"},
                                VKAMP_FIELD(early_stop_monitor), monitor_names()),
      config::real<RunOptions>("early_stop_min_delta",
                              {config::kLoopGroup, "X",
                               "an improvement of the monitored value is by more than X (Keras's min_delta)"},
                              VKAMP_FIELD(early_stop_min_delta), config::Range::at_least(0)),
      save_best,
  };
}

std::vector<Row> app_rows() {
  using config::text;
  Row progress =
      config::toggle<RunOptions>("progress",
                                {config::kOutputGroup, "", "no progress bar on stderr (--progress to turn it on)"},
                                VKAMP_FIELD(progress), "progress bar shown", "no progress bar");
  progress.help_shows_negation = true;
  return {
      text<RunOptions>("device", {config::kGeneralGroup, "SEL", "GPU index or a substring of its name"},
                       VKAMP_FIELD(device), "the first suitable GPU"),
      text<RunOptions>("data", {config::kLoopGroup, "DIR", "dataset directory"}, VKAMP_FIELD(data_dir),
                       "the sample's default"),
      text<RunOptions>("metrics", {config::kOutputGroup, "FILE", "write one JSON Lines record per step"},
                       VKAMP_FIELD(metrics_path), "none"),
      report_row(),
      progress,
      text<RunOptions>("save",
                       {config::kWeightsGroup, "FILE.safetensors",
                        "write the trained weights at the end of a successful run"},
                       VKAMP_FIELD(save_path), "none"),
      save_dtype_row(),
      text<RunOptions>("init_from",
                       {config::kWeightsGroup, "FILE",
                        "start from these weights (a file --save wrote, or a PyTorch state_dict; --resume "
                        "replaces them)"},
                       VKAMP_FIELD(init_from), "seeded initialization"),
  };
}

// The application's rows; the reporting and stopping ones join their help
// groups after --progress (output) and --init-from (weights).
std::vector<Row> all_app_rows() {
  std::vector<Row> rows = app_rows();
  for (Row& r : report_and_stop_rows()) rows.push_back(std::move(r));
  return rows;
}

const std::vector<Row>& own_rows() {
  static const std::vector<Row> rows = all_app_rows();
  return rows;
}

std::vector<Row> data_rows() {
  using config::text;
  const char* g = config::kDataGroup;
  Row task = config::row<RunOptions>(
      "task", {g, "T", "classify | regress (not given: classify, but labels that look like a regression's target "
                       "are refused)"});
  task.parse = [](RunOptions& o, const std::string& v, const std::string& l) {
    const std::string t = config::lower(v);
    if (t != "classify" && t != "regress") config::fail(l, "unknown task '" + v + "' (expected classify | regress)");
    o.data.regress = t == "regress";
    o.data.task_given = true;
  };
  task.show = [](const RunOptions& o) { return std::string(o.data.regress ? "regress" : "classify"); };
  Row split = config::real<RunOptions>("val_split", {g, "X", "without --test: hold out this fraction of --train"},
                                      VKAMP_FIELD(data.val_split), config::Range::from_to_below(0, 1));
  // Exported files use ';' (European spreadsheets) or tabs as often as commas.
  Row delimiter = config::row<RunOptions>("delimiter", {g, "C", "CSV: the field delimiter, one character (\\t or tab "
                                                                "for a tab)"});
  delimiter.parse = [](RunOptions& o, const std::string& v, const std::string& l) {
    const std::optional<char> c = data::csv_delimiter(v);
    if (!c) config::fail(l, "'" + v + "' is not a delimiter (one character other than a quote or a line end, or \\t)");
    o.data.delimiter = *c;
  };
  delimiter.show = [](const RunOptions& o) {
    return o.data.delimiter == '\t' ? std::string("tab") : std::string(1, o.data.delimiter);
  };
  Row header = config::toggle<RunOptions>(
      "header", {g, "", "CSV: the file has no header row; its columns are named c0, c1, ... (for --label, --target)"},
      VKAMP_FIELD(data.header), "the first row names the columns", "no header");
  header.help_shows_negation = true;
  return {
      text<RunOptions>("train", {g, "FILE", ".csv, .csv.gz, .npz, or an IDX images file (…-images-idx3-ubyte[.gz])"},
                       VKAMP_FIELD(data.train_path), "required"),
      text<RunOptions>("test", {g, "FILE", "held-out data, evaluated every epoch"}, VKAMP_FIELD(data.test_path),
                       "none"),
      split,
      text<RunOptions>("model", {g, "SPEC|FILE.yaml", "a model string (784-256r-10) or a YAML model file"},
                       VKAMP_FIELD(data.model), "an MLP with two hidden layers of 64 sized to the data"),
      task,
      text<RunOptions>("label", {g, "NAME", "CSV: the label column"}, VKAMP_FIELD(data.label), "the last column"),
      text<RunOptions>("target", {g, "A,B", "CSV: the regression target columns"}, VKAMP_FIELD(data.targets),
                       "the last column"),
      delimiter,
      header,
      config::count<RunOptions>("skip_rows",
                               {g, "N", "CSV: skip N lines before the header (scikit-learn's files have a count line)"},
                               VKAMP_FIELD(data.skip_rows)),
      config::toggle<RunOptions>("standardize",
                                {g, "", "standardize each feature with the training rows' mean and std (stored "
                                        "with the saved weights)"},
                                VKAMP_FIELD(data.standardize)),
      config::toggle<RunOptions>("standardize_target",
                                {g, "", "--task regress: standardize the targets likewise; vkamp-predict undoes it "
                                        "(stored with the saved weights)"},
                                VKAMP_FIELD(data.standardize_target)),
      config::toggle<RunOptions>("allow_nonfinite",
                                {g, "", "accept NaN, inf and numbers past float32's range in features and targets "
                                        "(refused by default)"},
                                VKAMP_FIELD(data.allow_nonfinite)),
      config::toggle<RunOptions>("drop_unlabelled",
                                {g, "", "leave out the rows whose label (or a target) is empty or only spaces, and "
                                        "count them (refused by default, naming the line and column)"},
                                VKAMP_FIELD(data.drop_unlabelled)),
      text<RunOptions>("x_key", {g, "NAME", ".npz: the inputs' array"}, VKAMP_FIELD(data.x_key), "x"),
      text<RunOptions>("y_key", {g, "NAME", ".npz: the labels' or targets' array"}, VKAMP_FIELD(data.y_key), "y"),
  };
}

std::vector<Row> lm_rows() {
  using config::text;
  const char* g = config::kLanguageModelGroup;
  Row size = config::row<RunOptions>("size", {g, "S", "tiny | small | medium | gpt2: the GPT's size (tiny fits a CPU "
                                                     "driver; small, medium and gpt2 are for GPUs)"});
  size.parse = [](RunOptions& o, const std::string& v, const std::string& l) {
    const std::string t = config::lower(v);
    if (t != "tiny" && t != "small" && t != "medium" && t != "gpt2")
      config::fail(l, "unknown size '" + v + "' (expected tiny | small | medium | gpt2)");
    o.lm.size = t;
  };
  size.show = [](const RunOptions& o) { return o.lm.size; };
  Row temperature = config::real<RunOptions>("temperature", {g, "T", "sampling temperature (0 = greedy: the likeliest)"},
                                            VKAMP_FIELD(lm.temperature), config::Range::at_least(0));
  return {
      text<RunOptions>("text", {g, "FILE", "the text to model, byte by byte"}, VKAMP_FIELD(lm.text_path),
                       "the fortunes package's text"),
      size,
      config::count<RunOptions>("block_size", {g, "N", "positions per window (0 = the size's)"},
                               VKAMP_FIELD(lm.block_size)),
      config::count<RunOptions>("n_layer", {g, "N", "transformer blocks (0 = the size's)"}, VKAMP_FIELD(lm.n_layer)),
      config::count<RunOptions>("n_head", {g, "N", "attention heads (0 = the size's)"}, VKAMP_FIELD(lm.n_head)),
      config::count<RunOptions>("n_embd", {g, "N", "channels of the residual stream (0 = the size's)"},
                               VKAMP_FIELD(lm.n_embd)),
      config::real<RunOptions>("dropout",
                               {g, "P", "drop this fraction of the embeddings' and each block's outputs in "
                                        "training, as nanoGPT (0.2 in its shakespeare_char config; 0 = none)"},
                               VKAMP_FIELD(lm.dropout), config::Range::from_to_below(0, 1)),
      config::count<RunOptions>("generate", {g, "N", "characters to sample at the end (0 = none)"},
                               VKAMP_FIELD(lm.generate)),
      temperature,
      config::count<RunOptions>("top_k", {g, "K", "sample among the K likeliest characters (0 = all)"},
                               VKAMP_FIELD(lm.top_k)),
      config::real<RunOptions>("top_p", {g, "P", "sample among the fewest likeliest whose probability reaches P (1 = all)"},
                               VKAMP_FIELD(lm.top_p), config::Range::between(0, 1.0000001)),
      text<RunOptions>("prompt", {g, "TEXT", "the text the sample continues"}, VKAMP_FIELD(lm.prompt),
                       "a new line"),
      config::toggle<RunOptions>("generate_only",
                                 {g, "", "sample from --init-from FILE's GPT (saved by --save) without the text or "
                                         "training, in --precision (as vkamp-generate)"},
                                 VKAMP_FIELD(lm.generate_only)),
  };
}

size_t group_index(const char* group) {
  const auto& groups = config::kHelpGroups;
  return size_t(std::find(std::begin(groups), std::end(groups), std::string_view(group)) - std::begin(groups));
}

// The training rows then the application's, each group together in --help order.
std::vector<Row> merged_rows(Rows which) {
  std::vector<Row> rows;
  for (const auto& s : config::training_settings()) rows.push_back(config::lift<RunOptions>(s));
  rows.insert(rows.end(), own_rows().begin(), own_rows().end());
  if (which != Rows::Common) {
    const std::vector<Row> extra = which == Rows::WithData        ? data_rows()
                                   : which == Rows::LanguageModel ? lm_rows()
                                                                  : finetune_rows();
    // A job's row replaces a common one of the same key (a fine-tune's
    // --data FILE, not the samples' --data DIR), so a flag has one meaning.
    for (const Row& e : extra)
      rows.erase(std::remove_if(rows.begin(), rows.end(), [&](const Row& r) { return r.key == e.key; }), rows.end());
    rows.insert(rows.end(), extra.begin(), extra.end());
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return group_index(a.help.group) < group_index(b.help.group); });
  return rows;
}

}  // namespace

const std::vector<config::Setting<RunOptions>>& run_settings(Rows which) {
  static const std::vector<Row> sets[] = {merged_rows(Rows::Common), merged_rows(Rows::WithData),
                                          merged_rows(Rows::LanguageModel), merged_rows(Rows::FineTune)};
  return sets[size_t(which)];
}

const std::vector<std::string>& run_setting_keys(Rows which) {
  static const std::vector<std::string> sets[] = {config::keys_of(run_settings(Rows::Common)),
                                                  config::keys_of(run_settings(Rows::WithData)),
                                                  config::keys_of(run_settings(Rows::LanguageModel)),
                                                  config::keys_of(run_settings(Rows::FineTune))};
  return sets[size_t(which)];
}

void apply_setting(const std::string& key, const std::string& value, RunOptions& opts, const std::string& label) {
  config::apply_row(run_settings(), key, value, opts, label);
}

void apply_setting(const std::string& key, const std::string& value, RunOptions& opts) {
  apply_setting(key, value, opts, key);
}

void apply_config_file(const std::string& path, RunOptions& opts, Rows which) {
  opts.schedule_steps = config::apply_settings_file(run_settings(which), path, opts).schedule_steps;
}

void validate(const RunOptions& opts, Rows which) {
  config::check_rows(own_rows(), opts);
  if (which == Rows::WithData) config::check_rows(data_rows(), opts);
  if (which == Rows::LanguageModel) config::check_rows(lm_rows(), opts);
  if (which == Rows::FineTune) config::check_rows(finetune_rows(), opts);
  config::validate(opts);
}

}  // namespace vkamp::app
