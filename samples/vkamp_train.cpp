// vkamp-train: trains a model on the user's own data (CSV, .npz or IDX) in
// mixed precision with every setting the samples have, evaluates it on a
// held-out set every epoch, and saves weights that vkamp-predict and
// PyTorch read. Exit status: 0, 1 (the run failed, e.g. fail-fast), 2 (bad
// flags, data, model or files).
#include <cstdio>
#include <memory>

#include "sample_main.hpp"
#include "app/model_source.hpp"
#include "app/run_length.hpp"
#include "app/saved_model.hpp"
#include "app/user_data.hpp"
#include "app/workloads.hpp"
#include "vkamp/platform.hpp"

namespace {

using namespace vkamp;

const char* kAbout =
    "Trains a model on your data: --train FILE (.csv or .csv.gz, .npz with arrays x and y, or an IDX\n"
    "images file), held out by --test FILE or --val-split X. --model takes a model string (10-64r-64r-3, or\n"
    "28x28x1-c6k5p2r-m2-f-120r-10 for images) or a YAML model file; without it, an MLP with two hidden layers\n"
    "of 64 is sized to the data. --task regress trains --target columns with a mean squared error\n"
    "(--standardize-target scales them; vkamp-predict scales the outputs back). NaN and infinite values and\n"
    "empty labels are refused with the file and line (--drop-unlabelled leaves unlabelled rows out), and so\n"
    "are features past the range of --precision.\n"
    "--save FILE.safetensors writes the weights with the model string, classes and standardization, which\n"
    "vkamp-predict reads back; PyTorch loads the tensors (fcN.weight, fcN.bias) into the same network.";

std::string width_text(const std::vector<uint32_t>& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

// " (3 rows without a label left out)" after the row counts, or "".
std::string dropped_text(uint64_t dropped, bool regress) {
  if (!dropped) return "";
  return " (" + std::to_string(dropped) + (dropped == 1 ? " row" : " rows") + " without a " +
         (regress ? "target" : "label") + " left out)";
}

// The model for the data, checked against it with messages that name both.
std::unique_ptr<train::Trainer> make_checked_trainer(const app::RunOptions& cfg, Context& ctx,
                                                     const app::UserData& data, const std::string& model) {
  const train::LossKind loss = cfg.data.regress ? train::LossKind::MSE : train::LossKind::SoftmaxXent;
  app::ModelSource source = app::load_model(model);
  const graph::Graph& g = source.graph;
  const uint32_t inputs = g.input_tensor().shape.elements(), outputs = g.output_tensor().shape.elements();
  if (inputs != data.train.features)
    throw vkamp::ConfigError("--model " + model + " takes " + std::to_string(inputs) + " inputs but " +
                             cfg.data.train_path + " has " + std::to_string(data.train.features) + " features (" +
                             width_text(data.example_shape) + ")");
  if (outputs != data.outputs)
    throw vkamp::ConfigError("--model " + model + " has " + std::to_string(outputs) + " outputs but " +
                             cfg.data.train_path + " has " + std::to_string(data.outputs) +
                             (cfg.data.regress ? " target columns" : " classes"));
  return app::make_trainer(ctx, cfg, std::move(source), loss, data.train);
}

// The mean squared error over `held_out` (standardized targets) with the
// outputs and targets both taken back to the targets' own units, as
// vkamp-predict reports it.
double mse_in_target_units(train::Trainer& trainer, const data::HostData& held_out, const data::Standardizer& scaling) {
  std::vector<float> out = trainer.predict(held_out.x, held_out.count);
  std::vector<float> targets = held_out.targets;
  scaling.undo(out);
  scaling.undo(targets);
  double sum = 0;
  for (size_t i = 0; i < out.size(); ++i) sum += (double(out[i]) - targets[i]) * (double(out[i]) - targets[i]);
  return out.empty() ? 0 : sum / double(out.size());
}

}  // namespace

int main(int argc, char** argv) {
  vkamp::platform::utf8_arguments(argc, argv);
  return samples::sample_main({"vkamp-train", kAbout, app::Rows::WithData}, app::user_data_defaults(), argc, argv,
                              [](app::RunOptions& cfg, Context& ctx) {
    const app::UserData data = app::load_user_data(cfg.data, cfg.seed);
    app::check_value_range(data, cfg.data, cfg.precision);
    const std::string model = cfg.data.model.empty() ? app::default_model(data) : cfg.data.model;
    app::check_savable(model, cfg);
    std::unique_ptr<train::Trainer> trainer = make_checked_trainer(cfg, ctx, data, model);
    samples::init_weights_from_file(cfg, *trainer);
    trainer->set_held_out(data.test);
    if (!cfg.quiet)
      std::printf("vkamp-train: %s (%llu parameters) on %s: %u train / %u held-out rows%s of %s, %s, batch %u, "
                  "%s, %s\n",
                  model.c_str(), static_cast<unsigned long long>(trainer->model().param_count()),
                  cfg.data.train_path.c_str(), data.train.count, data.test.count,
                  dropped_text(data.dropped_unlabelled, cfg.data.regress).c_str(),
                  width_text(data.example_shape).c_str(),
                  cfg.data.regress ? "regression" : (std::to_string(data.outputs) + " classes").c_str(), cfg.batch,
                  app::run_length_text(*trainer).c_str(), samples::describe_run(cfg).c_str());
    if (cfg.dry_run) return samples::report_dry_run("vkamp-train", *trainer);
    if (!cfg.quiet && data.target_standardizer)
      std::printf("  (the per-epoch val mse is on the standardized targets; the final held-out figure is in the "
                  "targets' units too)\n");
    app::RunHistory history;
    const samples::RunResult s = samples::train_with_progress(*trainer, cfg, "vkamp-train", {}, &history);
    if (s.failed) {
      samples::write_report(cfg, history);
      return samples::report_failure("vkamp-train", cfg, s);
    }
    if (s.suggested) return 0;  // --loss-scale suggest: the suggestion is the result
    if (data.test.count) {
      const double v = app::final_held_out(*trainer, s, data.test).value;
      if (data.target_standardizer)
        std::printf("held-out mse %.6g (%.6g on the standardized targets)\n",
                    mse_in_target_units(*trainer, data.test, *data.target_standardizer), v);
      else if (cfg.data.regress) std::printf("held-out mse %.6g\n", v);
      else std::printf("held-out accuracy %.2f%%\n", 100 * v);
    }
    samples::print_run_report(cfg, *trainer, s);
    samples::write_report(cfg, history);
    samples::save_weights(cfg, *trainer, s, app::user_data_metadata(model, cfg.data, data));
    return 0;
  });
}
