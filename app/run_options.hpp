// What one run of a sample or of vkamp-studio is told: the training
// settings, plus where its files go and which GPU it uses. The trainer
// takes the TrainConfig part; the application handles the rest (opens the
// device, loads the data, writes metrics, reports and weights).
#pragma once
#include <string>
#include <vector>

#include "vkamp/config/train_config.hpp"
#include "vkamp/config/setting.hpp"

namespace vkamp::app {

// What vkamp-train (and vkamp-studio --train) trains on: the user's files
// and model. The samples bring their own and take none of these flags.
struct DataOptions {
  std::string model;                 // a model string or a YAML model file; empty = an MLP sized to the data
  std::string train_path, test_path; // .csv, .npz, or an IDX images file
  double val_split = 0;              // without --test: hold out this fraction of --train
  bool regress = false;              // --task regress (else classify)
  bool task_given = false;           // --task was given (classify by default refuses continuous labels)
  std::string label;                 // CSV: the label column (classify); empty = the last column
  std::string targets;               // CSV: comma-separated target columns (regress); empty = the last column
  bool standardize = false;          // per-feature (x - mean) / std, fitted on the training rows
  bool standardize_target = false;   // regress: the same for the targets, undone by vkamp-predict
  bool allow_nonfinite = false;      // let NaN and infinities through the readers
  bool drop_unlabelled = false;      // leave out rows with an empty label or target (else exit 2)
  char delimiter = ',';              // CSV: the field delimiter
  bool header = true;                // CSV: the first row names the columns (else c0, c1, ...)
  uint32_t skip_rows = 0;            // CSV: lines before the header to skip
  std::string x_key = "x", y_key = "y";  // .npz array names
};

// What charlm trains and samples: the text, the GPT's size (a preset, any
// part of which a flag may override) and how it writes text at the end.
struct LmOptions {
  std::string text_path;   // empty = the fortunes corpus (charlm_data.hpp)
  std::string size = "tiny";  // tiny | small | medium | gpt2 (app/charlm.cpp)
  uint32_t block_size = 0, n_layer = 0, n_head = 0, n_embd = 0;  // 0 = the size's
  double dropout = 0;         // nanoGPT's dropout in training (models/gpt.hpp)
  uint32_t generate = 400;    // characters sampled at the end (0 = none)
  double temperature = 0.8;   // 0 = greedy
  uint32_t top_k = 0;         // 0 = sample from every character
  double top_p = 1;           // 1 = no nucleus cut (app/sampling.hpp)
  std::string prompt;         // the text the sample continues (empty = a new line)
  bool generate_only = false; // sample from --init-from FILE's GPT; no text, no training
};

// What vkamp-finetune fine-tunes and on what: a Hugging Face model folder
// (or a named shape with random weights), its tokenizer, the user's text,
// and the LoRA adapters (rank 0: every weight trains).
struct FineTuneOptions {
  std::string model_dir;   // config.json, safetensors, tokenizer.json; or a GGUF file
  std::string quantize;    // hold the frozen base in these ggml blocks ("q4_k"; empty: the run's format)
  std::string synthetic;   // a preset shape instead of --model (models/llama_presets.hpp)
  std::string data_path;   // plain text, or JSON Lines of {"text": ...}
  std::string out_dir;     // adapter_model.safetensors and adapter_config.json (rank 0: the whole model)
  std::string merge_dir;   // also a model folder with the adapters merged in
  std::string merge_type = "f16";  // --merge FILE.gguf: "f16", or "base" (each tensor in the base's type)
  uint32_t lora_rank = 16;
  double lora_alpha = 32;
  double lora_dropout = 0;
  std::vector<std::string> lora_targets = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
  uint32_t seq_len = 256;      // positions per packed sequence
  double val_fraction = 0.1;   // the last part of the tokens validates
  bool evaluate_only = false;  // --max-steps 0: the validation loss, no training
  std::string chat_template;   // a chat template file for "messages" data, instead of the model's
  bool train_on_all = false;   // "messages" data: the loss on every token, not the assistant's alone
};

// What --early-stop and --save-best watch (Keras's EarlyStopping
// `monitor`): the held-out loss, accuracy or mean squared error; the mode
// follows the metric (lower loss and MSE, higher accuracy).
enum class Monitor { ValLoss, ValAccuracy, ValMse };

// Extends TrainConfig, so that code which trains reads the same fields
// either way and the training rows apply to it unchanged.
struct RunOptions : config::TrainConfig {
  std::string device;               // index or name substring; empty = default
  std::string data_dir;             // empty = the sample's default
  std::string metrics_path;         // JSON Lines, one record per step
  std::string report_path;          // PNG of the dashboard at the end of the run
  bool progress = true;             // progress bar on stderr
  bool quiet = false;               // the final summary only: no progress bar, no per-epoch lines
  bool profile = false;             // the summary adds GPU time per kernel and commands per step
  bool dry_run = false;             // set up, print the device memory, exit without training
  uint32_t early_stop = 0;          // stop after N evaluations without a better monitored value (0 = never)
  Monitor early_stop_monitor = Monitor::ValLoss;  // what --early-stop and --save-best watch
  double early_stop_min_delta = 0;  // an improvement is by more than this (Keras's min_delta)
  bool save_best = false;           // --save writes the weights of the best held-out evaluation
  std::string save_path;            // safetensors file of the weights at the end; empty = none
  std::string init_from;            // safetensors file the weights start from; empty = seeded init
  Format save_dtype = Format::F32;  // F32, F16 or BF16 (PyTorch has no cb16)
  DataOptions data;                 // vkamp-train's rows only (Rows::WithData)
  LmOptions lm;                     // charlm's rows only (Rows::LanguageModel)
  FineTuneOptions ft;               // vkamp-finetune's rows only (Rows::FineTune)
};

// Which rows a program takes: the samples' own, or those plus the data
// rows (vkamp-train) or the language-model rows (charlm).
enum class Rows { Common, WithData, LanguageModel, FineTune };

// Every setting of a run, the training ones and the application's, in
// --help order (run_settings.cpp).
const std::vector<config::Setting<RunOptions>>& run_settings(Rows rows = Rows::Common);
// Every key of run_settings(rows), aliases included.
const std::vector<std::string>& run_setting_keys(Rows rows = Rows::Common);

// As the train:: functions of the same names, over every setting of a run.
void apply_setting(const std::string& key, const std::string& value, RunOptions& opts, const std::string& label);
void apply_setting(const std::string& key, const std::string& value, RunOptions& opts);
void apply_config_file(const std::string& path, RunOptions& opts, Rows rows = Rows::Common);
void validate(const RunOptions& opts, Rows rows = Rows::Common);

}  // namespace vkamp::app
