// The training jobs vkamp ships, by name: model, loss, data and the
// defaults they train well with. The samples and the app's "sample" picker
// read them from here, so a job is defined once.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "app/model_source.hpp"
#include "app/run_loop.hpp"
#include "app/run_options.hpp"
#include "app/user_data.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::app {

struct Datasets {
  data::HostData train, test;  // test.count == 0: evaluate on nothing
  std::string model;            // set when the job's model depends on the data (vkamp-train's default)
  std::string vocab;            // a language model's: token id -> byte
  // A fine-tune's first conversation as rendered, its trained tokens
  // marked: what the run shows before it starts (empty for other data).
  std::string sample;
  // What --save writes beside the weights (vkamp-train's model string,
  // classes, standardization and columns; app/saved_model.hpp).
  std::map<std::string, std::string> metadata;
};

struct Workload {
  std::string name;   // "fashion_mlp"
  std::string about;  // one line
  std::string model;  // parse_model() spec
  train::LossKind loss = train::LossKind::SoftmaxXent;
  RunOptions defaults;
  // Loads the data for a run (its data_dir, seed). Throws data::DataError.
  std::function<Datasets(const RunOptions&)> load;
  // A model built from the data rather than a model string (charlm's GPT,
  // sized to the vocabulary); empty for the others.
  std::function<graph::Graph(const RunOptions&, const Datasets&)> graph;
  // A language model (charlm): evaluated by its mean loss on the held-out
  // text, writes a sample of text at the end, and takes the language-model
  // flags (Rows::LanguageModel).
  bool language_model = false;
  // The held-out value's name on the plots ("val loss"); empty: from the loss.
  std::string eval_name;
  // After the trainer is built: what the graph alone does not give (a
  // fine-tune's pretrained weights). Empty for the others.
  std::function<void(const RunOptions&, train::Trainer&)> prepare;
  // After a run that trained: writes what the job keeps (a fine-tune's
  // adapters) and returns what to say about it. Empty for the others.
  std::function<std::string(const RunOptions&, const train::Trainer&, const RunResult&)> finish;
};

const std::vector<Workload>& workloads();

// The graph a job trains on `data`: its own builder, else load_model() of
// the data's model or the job's.
ModelSource job_model(const Workload& job, const RunOptions& opts, const Datasets& data);

// The settings vkamp-train starts from: they train tabular data well out of the box.
RunOptions user_data_defaults();
// The job of vkamp-train (and vkamp-studio --train) over opts.data: the
// user's files and model (the model sized to the data when none is given).
Workload user_data_workload(const RunOptions& opts);
// vkamp-train's metadata for --save (app/saved_model.hpp) of `model` trained on `u`.
std::map<std::string, std::string> user_data_metadata(const std::string& model, const DataOptions& d,
                                                      const UserData& u);
// --save writes PyTorch names derived from a model string: throws
// ConfigError for a YAML model file with --save, before training.
void check_savable(const std::string& model, const RunOptions& opts);
// Throws vkamp::ConfigError naming the known workloads when `name` is not one.
const Workload& find_workload(const std::string& name);

}  // namespace vkamp::app
