// vkamp-predict: runs a model vkamp-train saved over a data file and writes
// its predictions: for a classifier, the class and the probability of each
// class; for a regression, the outputs. When the file has labels (or
// targets) it prints the accuracy (or the mean squared error and R²), and
// with --report-classes a confusion matrix and each class's precision,
// recall and F1; without labels or --out, the predictions go to stdout. The
// model string, the classes, the feature columns and the standardizations
// come from the weights file's metadata (app/saved_model.hpp); a model
// trained on standardized targets has its outputs scaled back to the
// targets' units.
// Exit status: 0, 1 (a runtime failure), 2 (bad flags or files).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/cli.hpp"
#include "app/saved_model.hpp"
#include "app/tool_main.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/context.hpp"
#include "vkamp/data/csv.hpp"
#include "vkamp/data/labeled_data.hpp"
#include "vkamp/data/npy_writer.hpp"
#include "vkamp/error.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/data/data_error.hpp"
#include "vkamp/train/evaluator.hpp"
#include "vkamp/train/model.hpp"
#include "vkamp/io/torch_layout.hpp"
#include "vkamp/platform.hpp"

namespace {

using namespace vkamp;

const char* kAbout =
    "Runs a model saved by vkamp-train (--save) over --data (.csv, .csv.gz, .npz, .npy or an IDX images\n"
    "file) and writes the predictions. The model, classes, feature columns and standardization are read\n"
    "from the weights file. Labels (or targets) in the data are optional; when present, the accuracy (or\n"
    "mean squared error, in the targets' units, and R², the mean over the target columns) is printed.";

const char* kPredictGroup = "Prediction";

struct Options {
  std::string weights, data, out;
  bool report_classes = false;
  bool precision_given = false;  // else the precision it trained in
  app::RunOptions run;           // the shared rows: --device, --precision, --batch and the CSV flags
};

bool ends_with(const std::string& s, const char* tail) {
  return s.size() > std::strlen(tail) && s.compare(s.size() - std::strlen(tail), std::string::npos, tail) == 0;
}

std::vector<config::Setting<Options>> own_rows() {
  using config::text;
  auto weights = text<Options>("weights", {kPredictGroup, "FILE", "a .safetensors file written by vkamp-train --save"},
                               VKAMP_FIELD(weights), "required");
  weights.check = [](const Options& o) {
    if (o.weights.empty()) throw ConfigError("--weights FILE is required");
  };
  auto data = text<Options>("data", {kPredictGroup, "FILE", "the rows to predict"}, VKAMP_FIELD(data), "required");
  data.check = [](const Options& o) {
    if (o.data.empty()) throw ConfigError("--data FILE is required");
  };
  auto out = text<Options>("out",
                           {kPredictGroup, "FILE",
                            ".csv: a header row, then per row the class and each class's probability (regression: "
                            "the outputs); .npy: float32 rows x classes probabilities (regression: rows x outputs)"},
                           VKAMP_FIELD(out), "with labels, print the metric only; without, the CSV on stdout");
  out.check = [](const Options& o) {
    if (!o.out.empty() && !ends_with(o.out, ".csv") && !ends_with(o.out, ".npy"))
      throw ConfigError("--out " + o.out + ": expected a file name ending in .csv or .npy");
  };
  return {weights, data, out,
          config::toggle<Options>("report_classes",
                                  {kPredictGroup, "",
                                   "a classifier on labelled data: print the confusion matrix and each class's "
                                   "precision, recall, F1 and support"},
                                  VKAMP_FIELD(report_classes))};
}

// Every flag, bound to `o`: its own rows, then the shared ones.
std::vector<app::Flag> flags_for(Options& o, const Options& defaults) {
  static const std::vector<config::Setting<Options>> rows = own_rows();
  std::vector<app::Flag> flags = app::bind_rows(rows, o, defaults);
  std::vector<app::Flag> shared = app::shared_flags(
      o.run, defaults.run, {"device", "precision", "batch", "delimiter", "header", "skip_rows", "allow_nonfinite", "drop_unlabelled"});
  app::Flag& precision = shared[1];
  precision.help.front().shown_default = "the precision it trained in";
  precision.parse = [&o, inner = precision.parse](const std::string& v, const std::string& l) {
    inner(v, l);
    o.precision_given = true;
  };
  app::Flag& batch = shared[2];
  batch.group = kPredictGroup;
  batch.help.front().meaning = "rows per forward pass";
  for (size_t i = 3; i < shared.size(); ++i) shared[i].group = "Reading --data";  // the CSV flags
  flags.insert(flags.end(), shared.begin(), shared.end());
  return flags;
}

// Softmax in double: the probabilities the logits stand for.
std::vector<double> softmax(const float* logits, uint32_t n) {
  double top = logits[0];
  for (uint32_t i = 1; i < n; ++i) top = std::max(top, double(logits[i]));
  std::vector<double> p(n);
  double sum = 0;
  for (uint32_t i = 0; i < n; ++i) sum += p[i] = std::exp(double(logits[i]) - top);
  for (double& v : p) v /= sum;
  return p;
}

// A CSV field: quoted when it holds a comma, quote or line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// Each row's class: the arg-max of its outputs, ties to the lower class as
// in the trainer's accuracy.
std::vector<uint32_t> arg_max(const std::vector<float>& out, uint32_t n, uint32_t C) {
  std::vector<uint32_t> best(n, 0);
  for (uint32_t r = 0; r < n; ++r)
    for (uint32_t c = 1; c < C; ++c)
      if (out[size_t(r) * C + c] > out[size_t(r) * C + best[r]]) best[r] = c;
  return best;
}

// R² of each target column (1 - residual / total sum of squares), and
// their mean, as scikit-learn's r2_score: none for a constant column.
std::optional<double> mean_r2(const std::vector<float>& out, const std::vector<float>& targets, uint32_t n,
                              uint32_t C) {
  double sum = 0;
  uint32_t columns = 0;
  for (uint32_t c = 0; c < C; ++c) {
    double mean = 0;
    for (uint32_t r = 0; r < n; ++r) mean += targets[size_t(r) * C + c];
    mean /= n;
    double residual = 0, total = 0;
    for (uint32_t r = 0; r < n; ++r) {
      const double y = targets[size_t(r) * C + c], d = double(out[size_t(r) * C + c]) - y;
      residual += d * d;
      total += (y - mean) * (y - mean);
    }
    if (total == 0) continue;
    sum += 1 - residual / total;
    ++columns;
  }
  if (columns == 0) return std::nullopt;
  return sum / columns;
}

// The accuracy (or mean squared error and R²) of the same outputs that are
// written, computed here in double; the data has labels (or targets).
void print_metric(const Options& o, const app::SavedModel& saved, const data::HostData& data,
                  const std::vector<float>& out, const std::vector<uint32_t>& classes, uint32_t C) {
  const uint32_t n = data.count;
  if (saved.regress) {
    double sum = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      const double d = double(out[i]) - data.targets[i];
      sum += d * d;
    }
    const std::optional<double> r2 = mean_r2(out, data.targets, n, C);
    char r2_text[48] = "";
    if (r2) std::snprintf(r2_text, sizeof r2_text, ", r2 %.6f%s", *r2, C > 1 ? " (mean over the targets)" : "");
    std::printf("mse %.6g%s over %u rows of %s\n", sum / double(out.size()), r2_text, n, o.data.c_str());
    return;
  }
  uint32_t correct = 0;
  for (uint32_t r = 0; r < n; ++r) correct += classes[r] == data.labels[r];
  std::printf("accuracy %.2f%% over %u rows of %s\n", 100.0 * correct / n, n, o.data.c_str());
}

// --report-classes: the confusion matrix (rows: the true class, columns:
// the predicted one), then each class's precision, recall, F1 and support,
// and their unweighted mean; "-" where a ratio has nothing to divide by.
void print_class_report(const app::SavedModel& saved, const data::HostData& data,
                        const std::vector<uint32_t>& classes) {
  const size_t K = saved.classes.size();
  std::vector<std::vector<uint64_t>> m(K, std::vector<uint64_t>(K, 0));
  for (uint32_t r = 0; r < data.count; ++r) ++m[data.labels[r]][classes[r]];
  int w = 9;  // "precision"
  for (const std::string& name : saved.classes) w = std::max(w, int(name.size()));
  std::printf("confusion matrix (rows: true class, columns: predicted class)\n%*s", w + 2, "");
  for (const std::string& name : saved.classes) std::printf(" %*s", w, name.c_str());
  std::printf("\n");
  for (size_t t = 0; t < K; ++t) {
    std::printf("  %*s", w, saved.classes[t].c_str());
    for (size_t p = 0; p < K; ++p) std::printf(" %*llu", w, static_cast<unsigned long long>(m[t][p]));
    std::printf("\n");
  }
  auto ratio = [](double num, double den) { return den > 0 ? std::optional<double>(num / den) : std::nullopt; };
  auto cell = [&](std::optional<double> v) {
    char buf[32];
    if (v) std::snprintf(buf, sizeof buf, " %*.4f", w, *v);
    else std::snprintf(buf, sizeof buf, " %*s", w, "-");
    return std::string(buf);
  };
  std::printf("  %*s %*s %*s %*s %*s\n", w, "class", w, "precision", w, "recall", w, "f1", w, "support");
  double sums[3] = {0, 0, 0};
  uint32_t counted[3] = {0, 0, 0};
  for (size_t c = 0; c < K; ++c) {
    uint64_t predicted = 0, actual = 0;
    for (size_t k = 0; k < K; ++k) predicted += m[k][c], actual += m[c][k];
    const std::optional<double> precision = ratio(double(m[c][c]), double(predicted));
    const std::optional<double> recall = ratio(double(m[c][c]), double(actual));
    const std::optional<double> f1 =
        precision && recall ? ratio(2 * *precision * *recall, *precision + *recall) : std::nullopt;
    const std::optional<double> v[3] = {precision, recall, f1};
    for (int i = 0; i < 3; ++i)
      if (v[i]) sums[i] += *v[i], ++counted[i];
    std::printf("  %*s%s%s%s %*llu\n", w, saved.classes[c].c_str(), cell(precision).c_str(), cell(recall).c_str(),
                cell(f1).c_str(), w, static_cast<unsigned long long>(actual));
  }
  std::printf("  %*s%s%s%s %*u\n", w, "macro avg", cell(ratio(sums[0], counted[0])).c_str(),
              cell(ratio(sums[1], counted[1])).c_str(), cell(ratio(sums[2], counted[2])).c_str(), w, data.count);
}

// A header row, then per row the class and each class's probability (a
// regression: its outputs).
void write_csv(std::ostream& f, const app::SavedModel& saved, const std::vector<float>& table, uint32_t n,
               uint32_t C, const std::vector<uint32_t>& classes) {
  if (saved.regress) {
    for (uint32_t c = 0; c < C; ++c)
      f << (c ? "," : "") << csv_field(c < saved.targets.size() ? saved.targets[c] : "y" + std::to_string(c));
  } else {
    f << "class";
    for (const std::string& name : saved.classes) f << "," << csv_field("p_" + name);
  }
  f << "\n";
  char num[32];
  for (uint32_t r = 0; r < n; ++r) {
    if (!saved.regress) f << csv_field(saved.classes[classes[r]]);
    for (uint32_t c = 0; c < C; ++c) {
      std::snprintf(num, sizeof num, "%.9g", double(table[size_t(r) * C + c]));
      f << (c || !saved.regress ? "," : "") << num;
    }
    f << "\n";
  }
}

int run(const Options& o) {
  const io::TensorFile file = io::read_safetensors(o.weights);
  const app::SavedModel saved = app::read_saved_model(file, o.weights);
  const models::ModelSpec spec = models::parse_model(saved.model);
  std::string precision = format_name(o.run.precision);
  if (!o.precision_given) {
    auto it = file.metadata.find("vkamp.precision");
    precision = it == file.metadata.end() ? "fp32" : it->second;
  }
  const auto fmt = parse_format(precision);
  if (!fmt) throw io::FormatError(o.weights + ": vkamp.precision: unknown precision '" + precision + "'");

  data::LoadOptions lo;
  lo.task = saved.regress ? data::Task::Regress : data::Task::Classify;
  lo.classes = saved.classes;
  lo.label = saved.label;
  lo.targets = saved.targets;
  lo.features = saved.features;
  lo.label_optional = true;
  lo.allow_nonfinite = o.run.data.allow_nonfinite;
  lo.drop_unlabelled = o.run.data.drop_unlabelled;
  lo.delimiter = o.run.data.delimiter;
  lo.header = o.run.data.header;
  lo.skip_rows = o.run.data.skip_rows;
  data::LabeledData rows = data::load_labeled(o.data, lo);
  for (const std::string& note : rows.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  if (rows.data.features != spec.inputs())
    throw data::DataError(o.data + ": has " + std::to_string(rows.data.features) + " features per row but " +
                           o.weights + "'s model (" + saved.model + ") takes " + std::to_string(spec.inputs()));
  if (saved.standardizer) saved.standardizer->apply(rows.data);
  if (o.report_classes && saved.regress)
    throw vkamp::ConfigError("--report-classes reports a classifier's classes, and " + o.weights +
                             " holds a regression model");
  if (o.report_classes && rows.data.labels.empty())
    throw data::DataError(o.data + ": --report-classes needs the labels" +
                          (saved.label.empty() ? std::string() : " (column '" + saved.label + "')") +
                          ", and the file has none");

  ContextOptions copt;
  copt.device = o.run.device;
  std::unique_ptr<Context> ctx_owner;
  try {
    ctx_owner = std::make_unique<Context>(copt);
  } catch (const Error& e) {  // no such device, or no Vulkan: a setting to change, not a crash
    throw vkamp::ConfigError(e.what());
  }
  Context& ctx = *ctx_owner;
  std::fprintf(stderr, "vkamp-predict on %s (%s)\n", ctx.info().name.c_str(), format_name(*fmt));
  train::Model model(ctx, spec, *fmt, o.run.batch, /*seed=*/1, false, false);
  std::vector<float> buffers;
  model.write_master(io::import_torch_tensors(spec, file, o.weights, &buffers));
  model.write_buffers(buffers);  // BatchNorm's running statistics: predict normalises with them
  const train::LossKind loss = saved.regress ? train::LossKind::MSE : train::LossKind::SoftmaxXent;
  train::Evaluator evaluator(ctx, model, loss, o.run.batch);
  const uint32_t n = rows.data.count, C = model.outputs();
  std::vector<float> out = evaluator.predict(rows.data.x, n);
  if (saved.target_standardizer) {
    if (saved.target_standardizer->mean.size() != C)
      throw io::FormatError(o.weights + ": vkamp.standardize_target has " +
                            std::to_string(saved.target_standardizer->mean.size()) + " columns but the model has " +
                            std::to_string(C) + " outputs");
    saved.target_standardizer->undo(out);  // the targets' own units, as the file holds them
  }

  const std::vector<uint32_t> classes = saved.regress ? std::vector<uint32_t>{} : arg_max(out, n, C);
  const bool labelled = !(saved.regress ? rows.data.targets.empty() : rows.data.labels.empty());
  if (labelled) {
    print_metric(o, saved, rows.data, out, classes, C);
    if (o.report_classes) print_class_report(saved, rows.data, classes);
  } else {
    std::fprintf(stderr, "%u rows of %s have no %s: predictions only\n", n, o.data.c_str(),
                 saved.regress ? "targets" : "labels");
  }
  // Unlabelled rows with nowhere else to go: the predictions are the output.
  const bool to_stdout = o.out.empty() && !labelled;
  if (o.out.empty() && !to_stdout) return 0;

  std::vector<float> table(size_t(n) * C);
  if (saved.regress) table = out;
  else
    for (uint32_t r = 0; r < n; ++r) {
      const std::vector<double> p = softmax(out.data() + size_t(r) * C, C);
      for (uint32_t c = 0; c < C; ++c) table[size_t(r) * C + c] = float(p[c]);
    }
  if (to_stdout) {
    std::fflush(stdout);
    write_csv(std::cout, saved, table, n, C, classes);
    std::cout.flush();
    return 0;
  }
  if (o.out.size() > 4 && o.out.compare(o.out.size() - 4, 4, ".npy") == 0) {
    data::write_npy_f32(o.out, {n, C}, table);
  } else {
    std::ofstream f(vkamp::platform::path_from_utf8(o.out), std::ios::binary);
    if (!f) throw data::DataError(o.out + ": cannot be written");
    write_csv(f, saved, table, n, C, classes);
    if (!f.flush()) throw data::DataError(o.out + ": write failed");
  }
  std::printf("predictions written to %s\n", o.out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  vkamp::platform::utf8_arguments(argc, argv);
  Options o;
  o.run.batch = 256;
  const Options defaults = o;
  const std::vector<app::Flag> flags = flags_for(o, defaults);
  const app::Program program{"vkamp-predict",
                             "--weights FILE.safetensors --data FILE [--out FILE.csv|FILE.npy] [flags]", kAbout, false,
                             ""};
  if (int status = app::parse_or_exit(program, argc, argv, flags); status >= 0) return status;
  return app::tool_main("vkamp-predict", [&] { return run(o); });
}
