// Settings files in the Cerebras trainer layout and as Model Zoo writes
// them (yaml-cpp's errors with their lines), and the command-line parser and
// its --help. Host only, no GPU.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "config_test_support.hpp"
#include "support/test_paths.hpp"

namespace vkamp::config {
namespace {

// ---- YAML files: the Cerebras trainer layout and yaml-cpp's errors -----------

// Every setting as --help shows it: two runs with the same list are the same run.
std::vector<std::string> shown(const RunOptions& o) {
  std::vector<std::string> out;
  for (const auto& row : app::run_settings()) out.push_back(row.key + "=" + row.show(o));
  return out;
}

TEST(ConfigYaml, ExampleFilesMapToTheSameSettings) {
  RunOptions flat, cerebras;
  apply_config_file(VKAMP_TEST_DIR(VKAMP_EXAMPLES_DIR) + "/configs/flat.yaml", flat);
  apply_config_file(VKAMP_TEST_DIR(VKAMP_EXAMPLES_DIR) + "/configs/cerebras_style.yaml", cerebras);
  EXPECT_EQ(shown(flat), shown(cerebras));
  EXPECT_EQ(cerebras.precision, Format::CB16);
  EXPECT_EQ(cerebras.scaler.initial_loss_scale, 32768.0);
  EXPECT_EQ(cerebras.scaler.steps_per_increase, 1000u);
  EXPECT_EQ(cerebras.scaler.max_loss_scale, 1e9);
  EXPECT_EQ(cerebras.clip.max_norm, 1.0);
  EXPECT_EQ(cerebras.optimizer.kind, OptimizerKind::SGD);
  EXPECT_EQ(cerebras.optimizer.lr, 0.05);
  EXPECT_EQ(cerebras.optimizer.momentum, 0.9);
  EXPECT_EQ(cerebras.optimizer.weight_decay, 0.0001);
  EXPECT_EQ(cerebras.seed, 7u);
  EXPECT_EQ(cerebras.epochs, 2u);
  EXPECT_NE(shown(cerebras), shown(RunOptions{}));
  EXPECT_NO_THROW(validate(cerebras));
}

TEST(ConfigYaml, CerebrasLayoutMapsLikeFlatKeys) {
  TempDir dir;
  std::string nested = dir.write("n.yaml",
                                 "trainer:\n"
                                 "  init:\n"
                                 "    precision: {fp16_type: bfloat16, loss_scaling_factor: 512,\n"
                                 "                max_gradient_value: 0.25}\n"
                                 "    optimizer:\n"
                                 "      optimizer_type: AdamW\n"
                                 "      learning_rate: 3.0e-4\n"
                                 "      weight_decay: 0.01\n");
  std::string flat = dir.write("f.yaml",
                               "fp16_type: bfloat16\nloss_scaling_factor: 512\nmax_gradient_value: 0.25\n"
                               "optimizer: adamw\nlr: 3.0e-4\nweight_decay: 0.01\n");
  RunOptions a, b;
  apply_config_file(nested, a);
  apply_config_file(flat, b);
  EXPECT_EQ(shown(a), shown(b));
  EXPECT_EQ(a.precision, Format::BF16);
  EXPECT_EQ(a.scaler.mode, LossScaleMode::Static);
  EXPECT_EQ(a.scaler.initial_loss_scale, 512.0);
  EXPECT_EQ(a.clip.max_value, 0.25);
  EXPECT_EQ(a.optimizer.kind, OptimizerKind::AdamW);
  EXPECT_EQ(a.optimizer.lr, 3.0e-4);
  // An empty section sets nothing.
  TrainConfig c;
  apply_config_file(dir.write("e.yaml", "trainer:\n  init:\n"), c);
  EXPECT_EQ(c.optimizer.lr, TrainConfig{}.optimizer.lr);
}

TEST(ConfigYaml, UnknownNestedKeyNamesItsPathAndTheClosestName) {
  TempDir dir;
  std::string f = dir.write("t.yaml",
                            "trainer:\n  init:\n    precision:\n      fp16_type: float16\n      fp16_typo: x\n");
  TrainConfig c;
  std::string m = error_of([&] { apply_config_file(f, c); });
  EXPECT_CONTAINS(m, f + ":5: ");
  EXPECT_CONTAINS(m, "unknown key 'trainer.init.precision.fp16_typo'");
  EXPECT_CONTAINS(m, "did you mean 'trainer.init.precision.fp16_type'");
  // At the section level too.
  std::string g = dir.write("s.yaml", "trainer:\n  init:\n    optimiser:\n      momentum: 0.9\n");
  m = error_of([&] { apply_config_file(g, c); });
  EXPECT_CONTAINS(m, g + ":3: ");
  EXPECT_CONTAINS(m, "did you mean 'trainer.init.optimizer'");
  // A bad precision_opt_level names the path and the values.
  std::string h = dir.write("p.yaml", "trainer:\n  init:\n    precision:\n      precision_opt_level: 3\n");
  m = error_of([&] { apply_config_file(h, c); });
  EXPECT_CONTAINS(m, h + ":4: trainer.init.precision.precision_opt_level: unknown value '3' (expected 0 | 1 | 2");
  // A bad value names the path it was written under.
  std::string v = dir.write("v.yaml", "trainer:\n  init:\n    precision:\n      fp16_type: half\n");
  m = error_of([&] { apply_config_file(v, c); });
  EXPECT_CONTAINS(m, v + ":4: trainer.init.precision.fp16_type: unknown value 'half'");
}

TEST(ConfigYaml, ASettingGivenTwiceIsAnError) {
  TempDir dir;
  TrainConfig c;
  // The same key twice in one map (yaml-cpp alone would keep both).
  std::string f = dir.write("d.yaml", "epochs: 2\nlr: 0.1\nepochs: 3\n");
  std::string m = error_of([&] { apply_config_file(f, c); });
  EXPECT_CONTAINS(m, f + ":3: epochs: set twice (first on line 1)");
  // One setting by its flat name and its Cerebras path.
  std::string g = dir.write("e.yaml", "learning_rate: 0.1\ntrainer:\n  init:\n    optimizer:\n      learning_rate: 0.2\n");
  m = error_of([&] { apply_config_file(g, c); });
  EXPECT_CONTAINS(m, g + ":5: trainer.init.optimizer.learning_rate: set twice (first on line 1)");
  // A section twice.
  std::string h = dir.write("s.yaml", "trainer:\n  init: {}\ntrainer:\n  init: {}\n");
  EXPECT_CONTAINS(error_of([&] { apply_config_file(h, c); }), h + ":3: trainer: set twice");
}

TEST(ConfigYaml, SyntaxErrorsHaveTheirLine) {
  TempDir dir;
  TrainConfig c;
  std::string f = dir.write("x.yaml", "epochs: 2\nlr: 0.1\nbatch: [1, 2\n\n");
  std::string m = error_of([&] { apply_config_file(f, c); });
  EXPECT_EQ(m.rfind(f + ":", 0), 0u) << m;
  EXPECT_CONTAINS(m, "YAML syntax error");
  std::string g = dir.write("y.yaml", "trainer:\n  init:\n    precision:\n   fp16_type: float16\n");
  m = error_of([&] { apply_config_file(g, c); });
  EXPECT_CONTAINS(m, g + ":4: ");
}

TEST(ConfigYaml, AListOrMapWhereAValueBelongsIsAnErrorWithItsLine) {
  TempDir dir;
  TrainConfig c;
  std::string f = dir.write("w.yaml", "epochs: 2\n# x\nmomentum: {value: 0.9}\n");
  EXPECT_CONTAINS(error_of([&] { apply_config_file(f, c); }), f + ":3: momentum: expected a single value, got a map");
  std::string g = dir.write("l.yaml",
                            "trainer:\n  init:\n    optimizer:\n      learning_rate:\n        - 0.1\n        - 0.01\n");
  EXPECT_CONTAINS(error_of([&] { apply_config_file(g, c); }),
                  g + ":4: trainer.init.optimizer.learning_rate: expected a single value, got a list");
  std::string h = dir.write("s.yaml", "epochs: 1\ntrainer: 5\n");
  EXPECT_CONTAINS(error_of([&] { apply_config_file(h, c); }), h + ":2: trainer: expected a section");
  std::string k = dir.write("k.yaml", "[a, b]: 1\n");
  EXPECT_CONTAINS(error_of([&] { apply_config_file(k, c); }), k + ":1: a key must be a plain name");
}

// ---- The Model Zoo trainer layout as Model Zoo writes it ----------------------

// Runs f, returning what it wrote on stderr (the notes and the warning).
template <class F>
std::string stderr_of(F&& f) {
  ::testing::internal::CaptureStderr();
  f();
  return ::testing::internal::GetCapturedStderr();
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(ModelZooConfig, ExampleLoadsAsWrittenAndNamesWhatItIgnoresOnce) {
  const std::string file = VKAMP_TEST_DIR(VKAMP_EXAMPLES_DIR) + "/configs/modelzoo_fashion_mlp.yaml";
  RunOptions o;
  const std::string err = stderr_of([&] { apply_config_file(file, o); });
  EXPECT_EQ(o.seed, 1u);
  EXPECT_EQ(o.precision, Format::F16);
  EXPECT_EQ(o.scaler.mode, LossScaleMode::Dynamic);
  EXPECT_EQ(o.scaler.initial_loss_scale, 32768.0);
  EXPECT_EQ(o.scaler.steps_per_increase, 1000u);
  EXPECT_EQ(o.clip.max_norm, 1.0);
  EXPECT_EQ(o.optimizer.kind, OptimizerKind::SGD);
  EXPECT_EQ(o.optimizer.lr, 0.05);  // the schedule's initial rate
  EXPECT_EQ(o.optimizer.momentum, 0.9);
  EXPECT_EQ(o.optimizer.weight_decay, 0.0001);
  EXPECT_EQ(o.optimizer.schedule, LrSchedule::Cosine);
  EXPECT_EQ(o.optimizer.warmup_steps, 0u);
  EXPECT_EQ(o.max_steps, 1872u);
  EXPECT_EQ(o.epochs, 1872u);  // so that max_steps decides, as in Model Zoo
  EXPECT_EQ(o.eval_every, 468u);
  EXPECT_EQ(o.eval_iters, 20u);
  EXPECT_EQ(o.checkpoint_every, 936u);
  EXPECT_EQ(o.batch, 128u);  // trainer.fit.train_dataloader.batch_size
  EXPECT_NO_THROW(validate(o));
  // One warning lists every section vkamp does not use, with its line.
  EXPECT_EQ(count_of(err, "warning"), 1u) << err;
  EXPECT_CONTAINS(err, file + ": warning: vkamp does not use these Model Zoo settings, ignored: ");
  for (const char* s : {"trainer.init.backend (line 16)", "trainer.init.model_dir (line 18)",
                        "trainer.init.model (line 20)", "trainer.init.logging (line 50)",
                        "trainer.fit.train_dataloader (line 53) but its batch_size", "trainer.fit.val_dataloader (line 59)",
                        "trainer.validate.val_dataloader (line 65)"})
    EXPECT_CONTAINS(err, s);
  // The logging-only key and the optimizer's rate (the schedule's wins) are notes.
  EXPECT_CONTAINS(err, file + ":43: note: trainer.init.precision.log_loss_scale ignored");
  EXPECT_CONTAINS(err, file + ":28: note: trainer.init.optimizer.SGD.lr ignored: the schedule's initial rate");
  EXPECT_EQ(count_of(err, "schedule's phases last"), 0u) << "total_iters matches max_steps:\n" << err;
}

TEST(ModelZooConfig, OptimizerClassesTakeTheirArgumentsAndCstorchsDefaults) {
  TempDir dir;
  RunOptions a;
  apply_config_file(dir.write("a.yaml",
                              "trainer:\n  init:\n    optimizer:\n      AdamW:\n        betas: [0.9, 0.95]\n"
                              "        weight_decay: 0.1\n        correct_bias: true\n"),
                    a);
  EXPECT_EQ(a.optimizer.kind, OptimizerKind::AdamW);
  EXPECT_EQ(a.optimizer.beta1, 0.9);
  EXPECT_EQ(a.optimizer.beta2, 0.95);
  EXPECT_EQ(a.optimizer.weight_decay, 0.1);
  EXPECT_EQ(a.optimizer.eps, 1e-6);    // cstorch's default, not vkamp's 1e-8
  EXPECT_EQ(a.optimizer.lr, 0.001);
  RunOptions s;
  apply_config_file(dir.write("s.yaml", "trainer:\n  init:\n    optimizer:\n      SGD:\n        lr: 0.1\n"), s);
  EXPECT_EQ(s.optimizer.kind, OptimizerKind::SGD);
  EXPECT_EQ(s.optimizer.lr, 0.1);
  EXPECT_EQ(s.optimizer.momentum, 0.0);  // cstorch's SGD: plain unless told
  RunOptions adam;
  apply_config_file(dir.write("d.yaml", "trainer:\n  init:\n    optimizer:\n      Adam: {lr: 3.0e-4, eps: 1.0e-8}\n"),
                    adam);
  EXPECT_EQ(adam.optimizer.kind, OptimizerKind::Adam);
  EXPECT_EQ(adam.optimizer.lr, 3e-4);
  EXPECT_EQ(adam.optimizer.eps, 1e-8);
  // A flat key wins over a default, before or after the section.
  for (const char* text : {"momentum: 0.5\ntrainer:\n  init:\n    optimizer:\n      SGD: {lr: 0.1}\n",
                           "trainer:\n  init:\n    optimizer:\n      SGD: {lr: 0.1}\nmomentum: 0.5\n"}) {
    RunOptions m;
    apply_config_file(dir.write("m.yaml", text), m);
    EXPECT_EQ(m.optimizer.momentum, 0.5) << text;
  }
  // Written twice, by the class and a flat key: an error.
  RunOptions t;
  std::string twice = dir.write("t.yaml", "momentum: 0.5\ntrainer:\n  init:\n    optimizer:\n      SGD: {momentum: 0.9}\n");
  EXPECT_CONTAINS(error_of([&] { apply_config_file(twice, t); }),
                  twice + ":5: trainer.init.optimizer.SGD.momentum: set twice (first on line 1)");
}

TEST(ModelZooConfig, ArgumentsVkampDoesNotComputeAreRefusedUnlessAtTheirDefault) {
  TempDir dir;
  RunOptions c;
  EXPECT_NO_THROW(apply_config_file(
      dir.write("ok.yaml", "trainer:\n  init:\n    optimizer:\n      SGD: {lr: 0.1, nesterov: false, dampening: 0.0}\n"),
      c));
  std::string n = dir.write("n.yaml", "trainer:\n  init:\n    optimizer:\n      SGD:\n        lr: 0.1\n        nesterov: true\n");
  EXPECT_CONTAINS(error_of([&] { apply_config_file(n, c); }),
                  n + ":6: trainer.init.optimizer.SGD.nesterov: only false is supported");
  std::string b = dir.write("b.yaml", "trainer:\n  init:\n    optimizer:\n      AdamW:\n        correct_bias: false\n");
  EXPECT_CONTAINS(error_of([&] { apply_config_file(b, c); }),
                  b + ":5: trainer.init.optimizer.AdamW.correct_bias: only true is supported");
  std::string l = dir.write("l.yaml", "trainer:\n  init:\n    optimizer:\n      AdamW:\n        betas: 0.9\n");
  EXPECT_CONTAINS(error_of([&] { apply_config_file(l, c); }),
                  l + ":5: trainer.init.optimizer.AdamW.betas: expected a list of two values");
  std::string e = dir.write("e.yaml", "trainer:\n  init:\n    loop:\n      steps_per_epoch: 10\n");
  EXPECT_CONTAINS(error_of([&] { apply_config_file(e, c); }),
                  e + ":4: trainer.init.loop.steps_per_epoch is not supported");
}

TEST(ModelZooConfig, AMisspeltNameInASectionVkampReadsIsAnErrorWithTheClosestName) {
  TempDir dir;
  RunOptions c;
  struct Case {
    const char* text;
    const char* where;
    const char* hint;
  };
  for (const Case& k : {
           Case{"trainer:\n  init:\n    optimizer:\n      SGD:\n        momentun: 0.9\n", ":5: ",
                "did you mean 'trainer.init.optimizer.SGD.momentum'"},
           Case{"trainer:\n  init:\n    optimizer:\n      AdamWW: {}\n", ":4: ", "did you mean 'trainer.init.optimizer.AdamW'"},
           Case{"trainer:\n  init:\n    loop:\n      max_step: 10\n", ":4: ", "did you mean 'trainer.init.loop.max_steps'"},
           Case{"trainer:\n  init:\n    checkpoint:\n      step: 10\n", ":4: ", "did you mean 'trainer.init.checkpoint.steps'"},
           Case{"trainer:\n  init:\n    modle: {}\n", ":3: ", "did you mean 'trainer.init.model'"},
           Case{"trainer:\n  fti: {}\n", ":2: ", "did you mean 'trainer.fit'"},
           Case{"trainer:\n  init:\n    schedulers:\n      - CosineDecayRL: {}\n", ":4: ",
                "did you mean 'trainer.init.schedulers.CosineDecayLR'"},
       }) {
    const std::string f = dir.write("x.yaml", k.text);
    const std::string m = error_of([&] { apply_config_file(f, c); });
    EXPECT_CONTAINS(m, f + k.where);
    EXPECT_CONTAINS(m, k.hint);
  }
  // Several trainers in one file: not a vkamp run.
  std::string l = dir.write("l.yaml", "trainer:\n  - trainer:\n      init: {}\n");
  EXPECT_CONTAINS(error_of([&] { apply_config_file(l, c); }), l + ":1: trainer: a list of trainers");
}

TEST(ModelZooConfig, LoopMapsStepsEvaluationsAndAccumulation) {
  TempDir dir;
  auto load = [&](const std::string& text) {
    RunOptions o;
    apply_config_file(dir.write("l.yaml", text), o);
    return o;
  };
  RunOptions a = load("trainer:\n  init:\n    loop:\n      max_steps: 100\n      eval_frequency: 0.25\n"
                      "      grad_accum_steps: 2\n");
  EXPECT_EQ(a.max_steps, 100u);
  EXPECT_EQ(a.epochs, 100u);
  EXPECT_EQ(a.eval_every, 25u);  // a quarter of the run
  EXPECT_EQ(a.grad_accum, 2u);
  EXPECT_EQ(load("trainer:\n  init:\n    loop: {max_steps: 100, eval_frequency: 0}\n").eval_every, 100u);
  EXPECT_EQ(load("trainer:\n  init:\n    loop: {max_steps: 100, eval_frequency: 1.0}\n").eval_every, 100u);
  EXPECT_EQ(load("trainer:\n  init:\n    loop: {max_steps: 100, eval_frequency: 1}\n").eval_every, 1u);
  // num_epochs decides the epochs; a flat epochs key wins over the implied one.
  EXPECT_EQ(load("trainer:\n  init:\n    loop: {num_epochs: 3, max_steps: 100}\n").epochs, 3u);
  EXPECT_EQ(load("epochs: 2\ntrainer:\n  init:\n    loop: {max_steps: 100}\n").epochs, 2u);
  EXPECT_EQ(load("trainer:\n  init:\n    loop: {max_steps: 100}\nepochs: 2\n").epochs, 2u);
  // A share of a run whose length the file does not give: an error.
  RunOptions c;
  std::string f = dir.write("f.yaml", "trainer:\n  init:\n    loop:\n      eval_frequency: 0.5\n");
  EXPECT_CONTAINS(error_of([&] { apply_config_file(f, c); }),
                  f + ":4: trainer.init.loop.eval_frequency: '0.5' is a share of the run, which needs "
                      "trainer.init.loop.max_steps");
  std::string g = dir.write("g.yaml", "trainer:\n  init:\n    loop:\n      max_steps: 10\n      eval_frequency: 1.5\n");
  EXPECT_CONTAINS(error_of([&] { apply_config_file(g, c); }), g + ":5: trainer.init.loop.eval_frequency: expected");
}

TEST(ModelZooConfig, SchedulesMapToVkampsOrAreRefused) {
  TempDir dir;
  RunOptions w;
  const std::string warm = dir.write("w.yaml",
                                     "trainer:\n  init:\n    optimizer:\n      AdamW: {weight_decay: 0.1}\n"
                                     "    schedulers:\n      - SequentialLR:\n          schedulers:\n"
                                     "          - LinearLR: {initial_learning_rate: 0, end_learning_rate: 3.0e-4, total_iters: 34}\n"
                                     "          - CosineDecayLR: {initial_learning_rate: 3.0e-4, end_learning_rate: 0, total_iters: 666}\n"
                                     "    loop: {max_steps: 600}\n");
  const std::string err = stderr_of([&] { apply_config_file(warm, w); });
  EXPECT_EQ(w.optimizer.lr, 3e-4);
  EXPECT_EQ(w.optimizer.schedule, LrSchedule::Cosine);
  EXPECT_EQ(w.optimizer.warmup_steps, 34u);
  EXPECT_CONTAINS(err, "the schedule's phases last 700 steps but the run 600");
  RunOptions s;
  apply_config_file(dir.write("s.yaml", "trainer:\n  init:\n    schedulers:\n      - StepLR: {initial_learning_rate: 0.1, "
                                        "step_size: 50, gamma: 0.5}\n"),
                    s);
  EXPECT_EQ(s.optimizer.schedule, LrSchedule::Step);
  EXPECT_EQ(s.optimizer.lr, 0.1);
  EXPECT_EQ(s.optimizer.step_size, 50u);
  EXPECT_EQ(s.optimizer.gamma, 0.5);
  RunOptions k;
  apply_config_file(dir.write("k.yaml", "trainer:\n  init:\n    schedulers:\n      ConstantLR: {learning_rate: 0.02}\n"), k);
  EXPECT_EQ(k.optimizer.schedule, LrSchedule::Constant);
  EXPECT_EQ(k.optimizer.lr, 0.02);
  RunOptions c;
  for (const auto& [text, needle] : std::vector<std::pair<std::string, std::string>>{
           {"      - PolynomialLR: {initial_learning_rate: 0.1}\n", ":4: trainer.init.schedulers.PolynomialLR is not supported"},
           {"      - CosineDecayLR: {initial_learning_rate: 0.1, end_learning_rate: 0.01, total_iters: 9}\n",
            ":4: trainer.init.schedulers.CosineDecayLR.end_learning_rate: only 0 is supported"},
           {"      - CosineDecayLR: {initial_learning_rate: 0.1, total_iters: 9}\n",
            ":4: trainer.init.schedulers.CosineDecayLR: needs end_learning_rate"},
           {"      - ConstantLR: {learning_rate: 0.1}\n      - ConstantLR: {learning_rate: 0.2}\n",
            ":3: trainer.init.schedulers: vkamp schedules the learning rate only, with one scheduler"},
       }) {
    const std::string f = dir.write("x.yaml", "trainer:\n  init:\n    schedulers:\n" + text);
    EXPECT_CONTAINS(error_of([&] { apply_config_file(f, c); }), f + needle);
  }
}

TEST(ModelZooConfig, PrecisionTakesEveryKey) {
  TempDir dir;
  RunOptions o;
  apply_config_file(dir.write("p.yaml",
                              "trainer:\n  init:\n    precision:\n      enabled: true\n      fp16_type: bfloat16\n"
                              "      loss_scaling_factor: dynamic\n      initial_loss_scale: 1024\n"
                              "      steps_per_increase: 500\n      min_loss_scale: 2\n      max_loss_scale: 65536\n"
                              "      max_gradient_value: 0.5\n      log_loss_scale: false\n"),
                    o);
  EXPECT_EQ(o.precision, Format::BF16);
  EXPECT_EQ(o.scaler.initial_loss_scale, 1024.0);
  EXPECT_EQ(o.scaler.steps_per_increase, 500u);
  EXPECT_EQ(o.scaler.min_loss_scale, 2.0);
  EXPECT_EQ(o.scaler.max_loss_scale, 65536.0);
  EXPECT_EQ(o.clip.max_value, 0.5);
  RunOptions off;
  apply_config_file(dir.write("o.yaml", "trainer:\n  init:\n    precision: {enabled: false}\n"), off);
  EXPECT_EQ(off.precision, Format::F32);
  std::string both = dir.write("b.yaml", "trainer:\n  init:\n    precision:\n      enabled: false\n      fp16_type: float16\n");
  EXPECT_CONTAINS(error_of([&] { apply_config_file(both, off); }),
                  both + ":5: trainer.init.precision.fp16_type: has no effect with enabled: false");
}

// ---- command line ------------------------------------------------------------

TEST(CliParse, FlagsOverrideFileInEitherOrder) {
  TempDir dir;
  std::string f = dir.write("f.yaml", "lr: 0.1\nepochs: 7\n");
  {
    RunOptions c;
    parse({"--lr", "0.5", "--config", f}, c);
    EXPECT_EQ(c.optimizer.lr, 0.5);
    EXPECT_EQ(c.epochs, 7u);  // the file still applies where no flag overrides
  }
  {
    RunOptions c;
    parse({"--config", f, "--lr", "0.5"}, c);
    EXPECT_EQ(c.optimizer.lr, 0.5);
  }
  {
    RunOptions c;
    parse({"--lr=0.25", "--config=" + f}, c);
    EXPECT_EQ(c.optimizer.lr, 0.25);
  }
}

TEST(CliParse, CommonFlags) {
  RunOptions c;
  auto r = parse(
      {"--device", "1", "--precision", "bf16", "--loss-scale", "512", "--epochs", "3", "--batch=64", "--lr",
       "0.05", "--data", "/d", "--inject-overflow", "120,300-305", "--metrics", "m.jsonl", "--seed", "42"},
      c);
  EXPECT_FALSE(r.help);
  EXPECT_EQ(c.device, "1");
  EXPECT_EQ(c.precision, Format::BF16);
  EXPECT_EQ(c.scaler.mode, LossScaleMode::Static);
  EXPECT_EQ(c.scaler.initial_loss_scale, 512.0);
  EXPECT_EQ(c.epochs, 3u);
  EXPECT_EQ(c.batch, 64u);
  EXPECT_EQ(c.optimizer.lr, 0.05);
  EXPECT_EQ(c.data_dir, "/d");
  ASSERT_EQ(c.inject_overflow.size(), 2u);
  EXPECT_EQ(c.inject_overflow[1].first, 300u);
  EXPECT_EQ(c.inject_overflow[1].last, 305u);
  EXPECT_EQ(c.metrics_path, "m.jsonl");
  EXPECT_EQ(c.seed, 42u);
}

TEST(CliParse, YamlKeysAsDashedFlags) {
  RunOptions c;
  parse({"--max-gradient-norm", "1.0", "--overflow-policy", "retry", "--steps-per-increase", "100",
         "--initial-loss-scale", "1024", "--fp16-type=bfloat16", "--loss-scaling-factor", "dynamic",
         "--learning-rate", "0.3", "--batch-size", "16"},
        c);
  EXPECT_EQ(c.clip.max_norm, 1.0);
  EXPECT_EQ(c.scaler.policy, OverflowPolicy::Retry);
  EXPECT_EQ(c.scaler.steps_per_increase, 100u);
  EXPECT_EQ(c.scaler.initial_loss_scale, 1024.0);
  EXPECT_EQ(c.precision, Format::BF16);
  EXPECT_EQ(c.scaler.mode, LossScaleMode::Dynamic);
  EXPECT_EQ(c.optimizer.lr, 0.3);
  EXPECT_EQ(c.batch, 16u);
}

TEST(CliParse, LossScaleModes) {
  RunOptions a;
  parse({"--loss-scale", "none"}, a);
  EXPECT_EQ(a.scaler.mode, LossScaleMode::None);
  RunOptions b;
  b.scaler.mode = LossScaleMode::None;
  parse({"--loss-scale=dynamic"}, b);
  EXPECT_EQ(b.scaler.mode, LossScaleMode::Dynamic);
  RunOptions z;
  EXPECT_CONTAINS(error_of([&] { parse({"--loss-scale", "0"}, z); }), "--loss-scale");
  EXPECT_CONTAINS(error_of([&] { parse({"--loss-scale=-4"}, z); }), "--loss-scale");
  EXPECT_CONTAINS(error_of([&] { parse({"--initial-loss-scale", "0"}, z); }), "--initial-loss-scale");
}

TEST(CliParse, BooleanFlagsTakeNoValue) {
  RunOptions c;
  parse({"--checkpoint", "c.ckpt", "--resume", "--no-progress", "--epochs", "2"}, c);
  EXPECT_TRUE(c.resume);
  EXPECT_FALSE(c.progress);
  EXPECT_EQ(c.epochs, 2u);
  RunOptions d;
  parse({"--progress=false"}, d);
  EXPECT_FALSE(d.progress);
  RunOptions e;
  EXPECT_CONTAINS(error_of([&] { parse({"--checkpoint", "c", "--resume", "true"}, e); }), "--resume");
  EXPECT_CONTAINS(error_of([&] { parse({"--no-progress=false"}, e); }), "--no-progress");
}

TEST(CliParse, UnknownFlagIsNamed) {
  RunOptions c;
  std::string m = error_of([&] { parse({"--epoch", "3"}, c); });
  EXPECT_CONTAINS(m, "--epoch");
  EXPECT_CONTAINS(m, "--epochs");  // the suggestion
  EXPECT_CONTAINS(error_of([&] { parse({"--frobnicate=1"}, c); }), "--frobnicate");
  // Underscored spellings are YAML keys, not flags.
  EXPECT_CONTAINS(error_of([&] { parse({"--max_gradient_norm", "1"}, c); }), "--max-gradient-norm");
  // Other tools' names point at ours.
  EXPECT_CONTAINS(error_of([&] { parse({"--scale-window", "5"}, c); }), "--steps-per-increase");
  // PyTorch's names for the scaler's knobs are aliases, not errors.
  parse({"--growth-interval", "5"}, c);
  EXPECT_EQ(c.scaler.steps_per_increase, 5u);
}

TEST(CliParse, MissingAndBadValuesNameTheFlag) {
  RunOptions c;
  EXPECT_CONTAINS(error_of([&] { parse({"--epochs"}, c); }), "--epochs");
  EXPECT_CONTAINS(error_of([&] { parse({"--lr", "--epochs", "3"}, c); }), "--lr");
  EXPECT_CONTAINS(error_of([&] { parse({"--config"}, c); }), "--config");
  EXPECT_CONTAINS(error_of([&] { parse({"--epochs", "three"}, c); }), "--epochs");
  EXPECT_CONTAINS(error_of([&] { parse({"--batch=0"}, c); }), "--batch");
  EXPECT_CONTAINS(error_of([&] { parse({"--precision", "fp8"}, c); }), "--precision");
  EXPECT_CONTAINS(error_of([&] { parse({"--inject-overflow", "1,,2"}, c); }), "--inject-overflow");
  EXPECT_CONTAINS(error_of([&] { parse({"--overflow-policy", "ignore"}, c); }), "--overflow-policy");
}

TEST(CliParse, PositionalArgumentIsAnError) {
  RunOptions c;
  EXPECT_CONTAINS(error_of([&] { parse({"--epochs", "3", "extra"}, c); }), "extra");
  EXPECT_CONTAINS(error_of([&] { parse({"-x"}, c); }), "-x");
}

TEST(CliParse, BothClipFlagsNameBoth) {
  RunOptions c;
  std::string m = error_of([&] { parse({"--max-gradient-norm", "1.0", "--max-gradient-value", "0.5"}, c); });
  EXPECT_CONTAINS(m, "--max-gradient-norm");
  EXPECT_CONTAINS(m, "--max-gradient-value");
}

TEST(CliParse, ValidatesAfterFileAndFlags) {
  TempDir dir;
  // The file alone is invalid (initial scale above the max) but the flag fixes it.
  std::string f = dir.write("v.yaml", "max_loss_scale: 32768\n");
  RunOptions c;
  EXPECT_CONTAINS(error_of([&] { parse({"--config", f}, c); }), "initial_loss_scale");
  RunOptions d;
  EXPECT_NO_THROW(parse({"--config", f, "--initial-loss-scale", "32768"}, d));
  EXPECT_EQ(d.scaler.max_loss_scale, 32768.0);
  // A bad file is reported with its name and line.
  std::string g = dir.write("bad.yaml", "\nlr: fast\n");
  RunOptions e;
  EXPECT_CONTAINS(error_of([&] { parse({"--epochs", "1", "--config", g}, e); }), g + ":2:");
}

TEST(CliParse, HelpSetsHelp) {
  RunOptions c;
  EXPECT_TRUE(parse({"--help"}, c).help);
  EXPECT_TRUE(parse({"--epochs", "3", "-h"}, c).help);
  EXPECT_EQ(c.epochs, RunOptions{}.epochs);  // nothing applied
  EXPECT_FALSE(parse({}, c).help);
}

TEST(CliUsage, ListsEveryFlagWithDefaults) {
  const std::string u = common_usage();
  for (const char* f :
       {"--device", "--precision", "--loss-scale", "--epochs", "--batch", "--lr", "--data", "--config",
        "--inject-overflow", "--metrics", "--seed", "--help", "--resume", "--no-progress"})
    EXPECT_CONTAINS(u, std::string(f) + " ");
  for (const std::string& key : setting_keys()) {
    const std::set<std::string> aliases = {"learning_rate", "batch_size",     "progress",  "initial_scale",
                                           "growth_interval", "min_scale", "max_scale", "fail_after"};
    if (aliases.count(key)) continue;  // mentioned as "(also --...)"
    std::string flag = "--";
    for (char ch : key) flag += ch == '_' ? '-' : ch;
    EXPECT_CONTAINS(u, flag + " ");
  }
  EXPECT_CONTAINS(u, "--learning-rate");
  EXPECT_CONTAINS(u, "--batch-size");
  EXPECT_CONTAINS(u, "[default: 65536]");
  EXPECT_CONTAINS(u, "[default: 2000]");
  EXPECT_CONTAINS(u, "[default: dynamic]");
}

// One table: every row of the run's settings, the application's included,
// is a flag in --help and a key that parses its own shown default.
TEST(CliUsage, EveryRowIsListedAndParsesItsDefault) {
  const std::string u = common_usage();
  const RunOptions d;
  for (const auto& row : app::run_settings()) {
    SCOPED_TRACE(row.key);
    EXPECT_CONTAINS(u, row.help_shows_negation ? "--no-" + row.flag.substr(2) : row.flag);
    const std::string shown = row.show(d);
    bool is_number = !shown.empty() && (std::isdigit(static_cast<unsigned char>(shown[0])) != 0);
    if (is_number || row.key == "precision" || row.key == "optimizer" || row.key == "overflow_policy") {
      RunOptions c;
      EXPECT_NO_THROW(app::apply_setting(row.key, shown, c));
      EXPECT_EQ(row.show(c), shown);
    }
  }
}

}  // namespace
}  // namespace vkamp::config
