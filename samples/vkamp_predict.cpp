// vkamp-predict: runs a model vkamp-train saved over a data file and writes
// its predictions: for a classifier, the class and the probability of each
// class; for a regression, the outputs. When the file has labels (or
// targets) it prints the accuracy (or the mean squared error). The model
// string, the classes, the feature columns and the standardizations come
// from the weights file's metadata (app/saved_model.hpp); a model trained
// on standardized targets has its outputs scaled back to the targets' units.
// Exit status: 0, 1 (a runtime failure), 2 (bad flags or files).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "app/saved_model.hpp"
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

namespace {

using namespace vkamp;

const char* kUsage =
    "usage: vkamp-predict --weights FILE.safetensors --data FILE [--out FILE.csv|FILE.npy] [flags]\n"
    "\n"
    "Runs a model saved by vkamp-train (--save) over --data (.csv, .csv.gz, .npz, .npy or an IDX images\n"
    "file) and writes the predictions. The model, classes, feature columns and standardization are read\n"
    "from the weights file. Labels (or targets) in the data are optional; when present, the accuracy (or\n"
    "mean squared error, in the targets' units) is printed.\n"
    "\n"
    "  --weights FILE     a .safetensors file written by vkamp-train --save (required)\n"
    "  --data FILE        the rows to predict (required)\n"
    "  --out FILE         .csv: a header row, then per row the class and each class's probability\n"
    "                     (regression: the outputs); .npy: float32 rows x classes probabilities\n"
    "                     (regression: rows x outputs) [default: none, print the metric only]\n"
    "  --precision P      fp32 | float16 | bfloat16 | cbfloat16 [default: the precision it trained in]\n"
    "  --batch N          rows per forward pass [default: 256]\n"
    "  --delimiter C      CSV: the field delimiter, one character (\\t or tab for a tab) [default: ,]\n"
    "  --no-header        CSV: no header row; the columns are c0, c1, ... (as vkamp-train --no-header named\n"
    "                     them)\n"
    "  --skip-rows N      CSV: skip N lines before the header [default: 0]\n"
    "  --allow-nonfinite  accept NaN and infinite values in the features (refused by default)\n"
    "  --device SEL       GPU index or a substring of its name [default: the first suitable GPU]\n"
    "  -h, --help         print this help and exit\n";

[[noreturn]] void bad_usage(const std::string& why) { throw vkamp::ConfigError(why); }

struct Options {
  std::string weights, data, out, device, precision;
  uint32_t batch = 256;
  char delimiter = ',';
  bool header = true, allow_nonfinite = false;
  uint32_t skip_rows = 0;
};

// A count flag's value in [min, max].
uint32_t count_value(const std::string& flag, const std::string& v, unsigned long min, unsigned long max) {
  char* end = nullptr;
  const unsigned long n = std::strtoul(v.c_str(), &end, 10);
  if (v.empty() || *end || v[0] == '-' || n < min || n > max)
    bad_usage(flag + ": expected a count in [" + std::to_string(min) + ", " + std::to_string(max) + "], got '" + v +
              "'");
  return uint32_t(n);
}

Options parse(int argc, char** argv, bool& help) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      help = true;
      return o;
    }
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) bad_usage(a + ": missing value");
      return argv[++i];
    };
    if (a == "--weights") o.weights = value();
    else if (a == "--data") o.data = value();
    else if (a == "--out") o.out = value();
    else if (a == "--device") o.device = value();
    else if (a == "--precision") o.precision = value();
    else if (a == "--batch") o.batch = count_value(a, value(), 1, 65536);
    else if (a == "--skip-rows") o.skip_rows = count_value(a, value(), 0, UINT32_MAX);
    else if (a == "--no-header") o.header = false;
    else if (a == "--allow-nonfinite") o.allow_nonfinite = true;
    else if (a == "--delimiter") {
      const std::string v = value();
      const std::optional<char> c = data::csv_delimiter(v);
      if (!c) bad_usage("--delimiter: '" + v + "' is not a delimiter (one character other than a quote or a line end)");
      o.delimiter = *c;
    } else {
      bad_usage("unknown flag '" + a + "'");
    }
  }
  if (o.weights.empty()) bad_usage("--weights FILE is required");
  if (o.data.empty()) bad_usage("--data FILE is required");
  auto ends = [](const std::string& s, const char* t) {
    return s.size() > std::strlen(t) && s.compare(s.size() - std::strlen(t), std::string::npos, t) == 0;
  };
  if (!o.out.empty() && !ends(o.out, ".csv") && !ends(o.out, ".npy"))
    bad_usage("--out " + o.out + ": expected a file name ending in .csv or .npy");
  return o;
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

// The accuracy (or mean squared error) of the same outputs that are
// written, computed here in double, when the data has labels (or targets).
void print_metric(const Options& o, const app::SavedModel& saved, const data::HostData& data,
                  const std::vector<float>& out, const std::vector<uint32_t>& classes) {
  const uint32_t n = data.count;
  if (saved.regress ? data.targets.empty() : data.labels.empty()) {
    std::printf("%u rows of %s have no %s: predictions only\n", n, o.data.c_str(), saved.regress ? "targets" : "labels");
    return;
  }
  if (saved.regress) {
    double sum = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      const double d = double(out[i]) - data.targets[i];
      sum += d * d;
    }
    std::printf("mse %.6g over %u rows of %s\n", sum / double(out.size()), n, o.data.c_str());
    return;
  }
  uint32_t correct = 0;
  for (uint32_t r = 0; r < n; ++r) correct += classes[r] == data.labels[r];
  std::printf("accuracy %.2f%% over %u rows of %s\n", 100.0 * correct / n, n, o.data.c_str());
}

// A header row, then per row the class and each class's probability (a
// regression: its outputs).
void write_csv(const std::string& path, const app::SavedModel& saved, const std::vector<float>& table, uint32_t n,
               uint32_t C, const std::vector<uint32_t>& classes) {
  std::ofstream f(path);
  if (!f) throw data::DataError(path + ": cannot be written");
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
  if (!f.flush()) throw data::DataError(path + ": write failed");
}

int run(const Options& o) {
  const io::TensorFile file = io::read_safetensors(o.weights);
  const app::SavedModel saved = app::read_saved_model(file, o.weights);
  const models::ModelSpec spec = models::parse_model(saved.model);
  std::string precision = o.precision;
  if (precision.empty()) {
    auto it = file.metadata.find("vkamp.precision");
    precision = it == file.metadata.end() ? "fp32" : it->second;
  }
  const auto fmt = parse_format(precision);
  if (!fmt) throw vkamp::ConfigError("--precision: unknown precision '" + precision + "'");

  data::LoadOptions lo;
  lo.task = saved.regress ? data::Task::Regress : data::Task::Classify;
  lo.classes = saved.classes;
  lo.label = saved.label;
  lo.targets = saved.targets;
  lo.features = saved.features;
  lo.label_optional = true;
  lo.allow_nonfinite = o.allow_nonfinite;
  lo.delimiter = o.delimiter;
  lo.header = o.header;
  lo.skip_rows = o.skip_rows;
  data::LabeledData rows = data::load_labeled(o.data, lo);
  for (const std::string& note : rows.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  if (rows.data.features != spec.inputs())
    throw data::DataError(o.data + ": has " + std::to_string(rows.data.features) + " features per row but " +
                           o.weights + "'s model (" + saved.model + ") takes " + std::to_string(spec.inputs()));
  if (saved.standardizer) saved.standardizer->apply(rows.data);

  ContextOptions copt;
  copt.device = o.device;
  std::unique_ptr<Context> ctx_owner;
  try {
    ctx_owner = std::make_unique<Context>(copt);
  } catch (const Error& e) {  // no such device, or no Vulkan: a setting to change, not a crash
    throw vkamp::ConfigError(e.what());
  }
  Context& ctx = *ctx_owner;
  std::fprintf(stderr, "vkamp-predict on %s (%s)\n", ctx.info().name.c_str(), format_name(*fmt));
  train::Model model(ctx, spec, *fmt, o.batch, /*seed=*/1, false, false);
  model.write_master(io::import_torch_tensors(spec, file, o.weights));
  const train::LossKind loss = saved.regress ? train::LossKind::MSE : train::LossKind::SoftmaxXent;
  train::Evaluator evaluator(ctx, model, loss, o.batch);
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
  print_metric(o, saved, rows.data, out, classes);
  if (o.out.empty()) return 0;

  std::vector<float> table(size_t(n) * C);
  if (saved.regress) table = out;
  else
    for (uint32_t r = 0; r < n; ++r) {
      const std::vector<double> p = softmax(out.data() + size_t(r) * C, C);
      for (uint32_t c = 0; c < C; ++c) table[size_t(r) * C + c] = float(p[c]);
    }
  if (o.out.size() > 4 && o.out.compare(o.out.size() - 4, 4, ".npy") == 0) data::write_npy_f32(o.out, {n, C}, table);
  else write_csv(o.out, saved, table, n, C, classes);
  std::printf("predictions written to %s\n", o.out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool help = false;
  Options o;
  try {
    o = parse(argc, argv, help);
  } catch (const vkamp::ConfigError& e) {
    std::fprintf(stderr, "vkamp-predict: %s\n(see vkamp-predict --help)\n", e.what());
    return 2;
  }
  if (help) {
    std::printf("%s", kUsage);
    return 0;
  }
  try {
    return run(o);
  } catch (const vkamp::ConfigError& e) {
    std::fprintf(stderr, "vkamp-predict: %s\n", e.what());
    return 2;
  } catch (const data::DataError& e) {
    std::fprintf(stderr, "vkamp-predict: %s\n", e.what());
    return 2;
  } catch (const io::FormatError& e) {
    std::fprintf(stderr, "vkamp-predict: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vkamp-predict: error: %s\n", e.what());
    return 1;
  }
}
