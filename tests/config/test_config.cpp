// Training configuration: defaults, the YAML settings files (flat and the
// Cerebras trainer layout, through yaml-cpp), strict values,
// cross-field checks and the command-line parser. Host only, no GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "support/test_paths.hpp"
#include "app/cli.hpp"
#include "vkamp/config/train_config.hpp"

namespace vkamp::config {
namespace {

namespace fs = std::filesystem;

// The application's options extend TrainConfig with paths, device and
// progress bar; the command line fills them.
using app::CliResult;
using app::common_usage;
using app::RunOptions;

// A fresh directory per test for the YAML files it writes.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("vkamp-cfg-" + std::to_string(getpid()) + "-" + info->test_suite_name() + "-" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// The message of the ConfigError that f throws ("" and a failure if none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return "";
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "in: " << (haystack)

CliResult parse(std::vector<std::string> args, RunOptions& cfg) {
  args.insert(args.begin(), "train");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return app::parse_command_line(static_cast<int>(args.size()), argv.data(), cfg);
}

RunOptions with(const std::string& key, const std::string& value) {
  RunOptions c;
  apply_setting(key, value, c);
  return c;
}

// ---- defaults ----------------------------------------------------------------

TEST(ConfigDefaults, MatchPyTorchGradScaler) {
  const TrainConfig c;
  EXPECT_EQ(c.scaler.mode, LossScaleMode::Dynamic);
  EXPECT_EQ(c.scaler.initial_loss_scale, 65536.0);  // 2^16
  EXPECT_EQ(c.scaler.growth_factor, 2.0);
  EXPECT_EQ(c.scaler.backoff_factor, 0.5);
  EXPECT_EQ(c.scaler.steps_per_increase, 2000u);
  EXPECT_GT(c.scaler.min_loss_scale, 0.0);
  EXPECT_TRUE(std::isfinite(c.scaler.max_loss_scale));
  EXPECT_EQ(c.scaler.policy, OverflowPolicy::Skip);
  EXPECT_EQ(c.clip.max_norm, 0.0);
  EXPECT_EQ(c.clip.max_value, 0.0);
  EXPECT_NO_THROW(validate(c));
}

// ---- one setting at a time ---------------------------------------------------

TEST(ConfigSetting, CerebrasKeysMap) {
  EXPECT_EQ(with("fp16_type", "float16").precision, Format::F16);
  EXPECT_EQ(with("fp16_type", "bfloat16").precision, Format::BF16);
  EXPECT_EQ(with("fp16_type", "cbfloat16").precision, Format::CB16);
  EXPECT_EQ(with("initial_loss_scale", "32768").scaler.initial_loss_scale, 32768.0);
  EXPECT_EQ(with("steps_per_increase", "1000").scaler.steps_per_increase, 1000u);
  EXPECT_EQ(with("min_loss_scale", "6.103515625e-05").scaler.min_loss_scale, std::ldexp(1.0, -14));
  EXPECT_EQ(with("max_loss_scale", "32768").scaler.max_loss_scale, 32768.0);
  EXPECT_EQ(with("max_gradient_norm", "1.5").clip.max_norm, 1.5);
  EXPECT_EQ(with("max_gradient_value", "0.25").clip.max_value, 0.25);
  // fp16_type names only 16-bit types.
  EXPECT_CONTAINS(error_of([] { with("fp16_type", "fp32"); }), "fp16_type");
}

// --amp-level (amp_level) and Cerebras's precision_opt_level, vkamp's
// mapping: 0 -> O1, 1 -> O2, 2 -> O3.
TEST(ConfigSetting, AmpLevelAndPrecisionOptLevel) {
  EXPECT_EQ(TrainConfig{}.amp_level, graph::AmpLevel::O2);
  EXPECT_EQ(with("amp_level", "O0").amp_level, graph::AmpLevel::O0);
  EXPECT_EQ(with("amp_level", "o1").amp_level, graph::AmpLevel::O1);
  EXPECT_EQ(with("amp_level", "O3").amp_level, graph::AmpLevel::O3);
  EXPECT_EQ(with("precision_opt_level", "0").amp_level, graph::AmpLevel::O1);
  EXPECT_EQ(with("precision_opt_level", "1").amp_level, graph::AmpLevel::O2);
  EXPECT_EQ(with("precision_opt_level", "2").amp_level, graph::AmpLevel::O3);
  // A bad value names the closest level.
  std::string m = error_of([] { with("amp_level", "02"); });
  EXPECT_CONTAINS(m, "amp_level: unknown level '02' (expected O0 | O1 | O2 | O3; did you mean O2?)");
  EXPECT_CONTAINS(error_of([] { with("amp_level", "O4"); }), "did you mean O");
  EXPECT_CONTAINS(error_of([] { with("amp_level", "fastest"); }), "unknown level 'fastest' (expected O0 | O1 | O2 | O3)");
  EXPECT_CONTAINS(error_of([] { with("precision_opt_level", "O2"); }),
                  "unknown value 'O2' (expected 0 | 1 | 2: vkamp runs them as --amp-level O1 | O2 | O3; or give "
                  "amp_level: O2)");
  EXPECT_CONTAINS(error_of([] { with("precision_opt_level", "-1"); }), "precision_opt_level: unknown value '-1'");
}

// O0 is fp32 storage: the command line and files resolve it; a config that
// asks for O0 in a 16-bit format is refused by validate. Per-layer scaling
// does not see O1's casts.
TEST(ConfigCross, AmpLevels) {
  RunOptions o;
  ASSERT_FALSE(parse({"--precision", "bf16", "--amp-level", "O0"}, o).help);
  EXPECT_EQ(o.precision, Format::F32);
  EXPECT_EQ(o.amp_level, graph::AmpLevel::O0);
  RunOptions o1;
  parse({"--amp-level", "O1", "--precision", "bf16"}, o1);
  EXPECT_EQ(o1.precision, Format::BF16);
  TrainConfig c;
  c.amp_level = graph::AmpLevel::O0;
  EXPECT_CONTAINS(error_of([&] { validate(c); }), "--amp-level O0 (amp_level) runs everything in fp32");
  c = TrainConfig{};
  c.amp_level = graph::AmpLevel::O1;
  c.scaler.mode = LossScaleMode::PerLayer;
  EXPECT_CONTAINS(error_of([&] { validate(c); }), "--loss-scale per-layer is not supported with --amp-level O1");
}

TEST(ConfigYaml, PrecisionOptLevelMapsOntoAmpLevels) {
  TempDir dir;
  RunOptions a, b;
  apply_config_file(dir.write("c.yaml", "trainer:\n  init:\n    precision:\n      precision_opt_level: 0\n"), a);
  apply_config_file(dir.write("f.yaml", "amp_level: O1\n"), b);
  EXPECT_EQ(a.amp_level, graph::AmpLevel::O1);
  EXPECT_EQ(b.amp_level, graph::AmpLevel::O1);
}

TEST(ConfigSetting, LossScalingFactor) {
  TrainConfig c;
  c.scaler.mode = LossScaleMode::None;
  apply_setting("loss_scaling_factor", "dynamic", c);
  EXPECT_EQ(c.scaler.mode, LossScaleMode::Dynamic);
  EXPECT_EQ(c.scaler.initial_loss_scale, 65536.0);  // unchanged

  apply_setting("loss_scaling_factor", "128", c);
  EXPECT_EQ(c.scaler.mode, LossScaleMode::Static);
  EXPECT_EQ(c.scaler.initial_loss_scale, 128.0);

  apply_setting("loss_scaling_factor", "none", c);
  EXPECT_EQ(c.scaler.mode, LossScaleMode::None);

  EXPECT_CONTAINS(error_of([] { with("loss_scaling_factor", "0"); }), "loss_scaling_factor");
  EXPECT_CONTAINS(error_of([] { with("loss_scaling_factor", "-8"); }), "> 0");
  EXPECT_CONTAINS(error_of([] { with("loss_scaling_factor", "dynamical"); }), "dynamical");
}

TEST(ConfigSetting, VkampKeysMap) {
  RunOptions c;
  const std::pair<const char*, const char*> kv[] = {
      {"precision", "bf16"},
      {"device", "llvmpipe"},
      {"growth_factor", "4"},
      {"backoff_factor", "0.25"},
      {"hysteresis", "2"},
      {"overflow_policy", "retry"},
      {"max_retries", "7"},
      {"fail_after_overflows", "9"},
      {"histogram_interval", "0"},
      {"optimizer", "adamw"},
      {"learning_rate", "0.003"},
      {"momentum", "0.5"},
      {"beta1", "0.8"},
      {"beta2", "0.99"},
      {"eps", "1e-6"},
      {"weight_decay", "0.01"},
      {"lr_schedule", "cosine"},
      {"warmup_steps", "100"},
      {"lr_step_size", "30"},
      {"lr_gamma", "0.5"},
      {"batch_size", "64"},
      {"epochs", "5"},
      {"grad_accum", "4"},
      {"seed", "18446744073709551615"},
      {"data", "/tmp/mnist"},
      {"metrics", "m.jsonl"},
      {"checkpoint", "c.ckpt"},
      {"checkpoint_every", "500"},
      {"resume", "true"},
      {"inject_overflow", "3,7-9"},
      {"progress", "false"},
  };
  for (const auto& [k, v] : kv) apply_setting(k, v, c);
  EXPECT_EQ(c.precision, Format::BF16);
  EXPECT_EQ(c.device, "llvmpipe");
  EXPECT_EQ(c.scaler.growth_factor, 4.0);
  EXPECT_EQ(c.scaler.backoff_factor, 0.25);
  EXPECT_EQ(c.scaler.hysteresis, 2u);
  EXPECT_EQ(c.scaler.policy, OverflowPolicy::Retry);
  EXPECT_EQ(c.scaler.max_retries, 7u);
  EXPECT_EQ(c.scaler.fail_after_overflows, 9u);
  EXPECT_EQ(c.scaler.histogram_interval, 0u);
  EXPECT_EQ(c.optimizer.kind, OptimizerKind::AdamW);
  EXPECT_EQ(c.optimizer.lr, 0.003);
  EXPECT_EQ(c.optimizer.momentum, 0.5);
  EXPECT_EQ(c.optimizer.beta1, 0.8);
  EXPECT_EQ(c.optimizer.beta2, 0.99);
  EXPECT_EQ(c.optimizer.eps, 1e-6);
  EXPECT_EQ(c.optimizer.weight_decay, 0.01);
  EXPECT_EQ(c.optimizer.schedule, LrSchedule::Cosine);
  EXPECT_EQ(c.optimizer.warmup_steps, 100u);
  EXPECT_EQ(c.optimizer.step_size, 30u);
  EXPECT_EQ(c.optimizer.gamma, 0.5);
  EXPECT_EQ(c.batch, 64u);
  EXPECT_EQ(c.epochs, 5u);
  EXPECT_EQ(c.grad_accum, 4u);
  EXPECT_EQ(c.seed, 18446744073709551615ull);
  EXPECT_EQ(c.data_dir, "/tmp/mnist");
  EXPECT_EQ(c.metrics_path, "m.jsonl");
  EXPECT_EQ(c.checkpoint_path, "c.ckpt");
  EXPECT_EQ(c.checkpoint_every, 500u);
  EXPECT_TRUE(c.resume);
  ASSERT_EQ(c.inject_overflow.size(), 2u);
  EXPECT_EQ(c.inject_overflow[1].first, 7u);
  EXPECT_FALSE(c.progress);
  EXPECT_NO_THROW(validate(c));

  // The aliases and the other spellings.
  EXPECT_EQ(with("lr", "0.2").optimizer.lr, 0.2);
  EXPECT_EQ(with("batch", "32").batch, 32u);
  EXPECT_EQ(with("precision", "fp32").precision, Format::F32);
  EXPECT_EQ(with("precision", "float16").precision, Format::F16);
  EXPECT_EQ(with("precision", "cbfloat16").precision, Format::CB16);
  EXPECT_EQ(with("overflow_policy", "apply").scaler.policy, OverflowPolicy::Apply);
  EXPECT_EQ(with("optimizer", "adam").optimizer.kind, OptimizerKind::Adam);
  EXPECT_EQ(with("lr_schedule", "step").optimizer.schedule, LrSchedule::Step);
}

TEST(ConfigSetting, SafetensorsKeys) {
  EXPECT_EQ(with("save", "w.safetensors").save_path, "w.safetensors");
  EXPECT_EQ(with("init_from", "pt.safetensors").init_from, "pt.safetensors");
  EXPECT_EQ(RunOptions{}.save_dtype, Format::F32);
  EXPECT_EQ(with("save_dtype", "bf16").save_dtype, Format::BF16);
  EXPECT_EQ(with("save_dtype", "FP16").save_dtype, Format::F16);
  RunOptions c;
  EXPECT_CONTAINS(error_of([&] { apply_setting("save_dtype", "cb16", c, "--save-dtype"); }),
                  "--save-dtype: unknown value 'cb16' (expected fp32 | fp16 | bf16)");
  c.save_dtype = Format::CB16;
  EXPECT_CONTAINS(error_of([&] { validate(c); }), "--save-dtype (save_dtype) must be fp32, fp16 or bf16");
}

TEST(ConfigSetting, UnknownKeyIsNamedWithSuggestion) {
  std::string m = error_of([] { with("learnin_rate", "0.1"); });
  EXPECT_CONTAINS(m, "learnin_rate");
  EXPECT_CONTAINS(m, "learning_rate");
  // Other tools' names point at ours.
  EXPECT_CONTAINS(error_of([] { with("scale_window", "10"); }), "steps_per_increase");
  EXPECT_CONTAINS(error_of([] { with("zzzzzz", "1"); }), "zzzzzz");
  EXPECT_EQ(suggest_key("max_grad_norm"), "max_gradient_norm");
  EXPECT_EQ(suggest_key("epoch"), "epochs");
  EXPECT_EQ(suggest_key("zzzzzz"), "");
}

// One knob, one name: PyTorch GradScaler's names (and the fields' old
// names) are accepted aliases of vkamp's keys.
TEST(ConfigSetting, ScalerAliasesSetTheSameKnob) {
  EXPECT_EQ(with("growth_interval", "10").scaler.steps_per_increase, 10u);
  EXPECT_EQ(with("initial_scale", "1024").scaler.initial_loss_scale, 1024.0);
  EXPECT_EQ(with("min_scale", "2").scaler.min_loss_scale, 2.0);
  EXPECT_EQ(with("max_scale", "4096").scaler.max_loss_scale, 4096.0);
  EXPECT_EQ(with("fail_after", "7").scaler.fail_after_overflows, 7u);
}

TEST(ConfigSetting, UnknownPrecisionIsAnError) {
  std::string m = error_of([] { with("precision", "fp8"); });
  EXPECT_CONTAINS(m, "precision");
  EXPECT_CONTAINS(m, "fp8");
  EXPECT_CONTAINS(error_of([] { with("fp16_type", "half"); }), "half");
}

TEST(ConfigSetting, NumbersAreStrict) {
  for (const char* bad : {"12abc", "", "nan", "inf", "-inf", "1e999", "0x10", " ", "1.2.3", "+-1"}) {
    SCOPED_TRACE(bad);
    EXPECT_CONTAINS(error_of([&] { with("lr", bad); }), "lr");
  }
  for (const char* bad : {"12abc", "", "-1", "1.5", "1e3", "4294967296", "nan"}) {
    SCOPED_TRACE(bad);
    EXPECT_CONTAINS(error_of([&] { with("epochs", bad); }), "epochs");
  }
  EXPECT_CONTAINS(error_of([] { with("seed", "18446744073709551616"); }), "seed");
  EXPECT_EQ(with("epochs", "4294967295").epochs, 4294967295u);
  EXPECT_EQ(with("lr", "1e-3").optimizer.lr, 1e-3);
  EXPECT_EQ(with("lr", "+0.5").optimizer.lr, 0.5);
  EXPECT_CONTAINS(error_of([] { with("resume", "maybe"); }), "resume");
}

TEST(ConfigSetting, CountsMustBeAtLeastOne) {
  for (const char* key :
       {"batch", "epochs", "grad_accum", "steps_per_increase", "lr_step_size", "hysteresis"}) {
    SCOPED_TRACE(key);
    EXPECT_CONTAINS(error_of([&] { with(key, "0"); }), key);
  }
  EXPECT_EQ(with("histogram_interval", "0").scaler.histogram_interval, 0u);  // 0 = never
  EXPECT_EQ(with("max_retries", "0").scaler.max_retries, 0u);
  EXPECT_NO_THROW(validate(with("fail_after_overflows", "0")));  // 0 = never stop (step_control.comp)
}

// --sync-bn is valid with or without mpirun (one process: plain BatchNorm).
TEST(ConfigSetting, SyncBnIsAccepted) {
  auto c = with("sync_bn", "true");
  EXPECT_TRUE(c.sync_bn);
  EXPECT_NO_THROW(validate(c));
  EXPECT_FALSE(with("sync_bn", "false").sync_bn);
}

TEST(ConfigSetting, ValueRangesPerKey) {
  EXPECT_CONTAINS(error_of([] { with("initial_loss_scale", "0"); }), "initial_loss_scale");
  EXPECT_CONTAINS(error_of([] { with("initial_loss_scale", "-1024"); }), "initial_loss_scale");
  EXPECT_CONTAINS(error_of([] { with("min_loss_scale", "0"); }), "min_loss_scale");
  EXPECT_CONTAINS(error_of([] { with("max_loss_scale", "-1"); }), "max_loss_scale");
  EXPECT_CONTAINS(error_of([] { with("growth_factor", "1"); }), "growth_factor");
  EXPECT_CONTAINS(error_of([] { with("backoff_factor", "1"); }), "backoff_factor");
  EXPECT_CONTAINS(error_of([] { with("backoff_factor", "0"); }), "backoff_factor");
  EXPECT_CONTAINS(error_of([] { with("lr", "-0.1"); }), "lr");
  EXPECT_CONTAINS(error_of([] { with("weight_decay", "-1e-4"); }), "weight_decay");
  EXPECT_CONTAINS(error_of([] { with("beta1", "1"); }), "beta1");
  EXPECT_CONTAINS(error_of([] { with("beta2", "-0.1"); }), "beta2");
  EXPECT_CONTAINS(error_of([] { with("max_gradient_norm", "-1"); }), "max_gradient_norm");
  EXPECT_EQ(with("beta2", "0").optimizer.beta2, 0.0);
  EXPECT_EQ(with("lr", "0").optimizer.lr, 0.0);
}

TEST(ConfigSetting, LabelReplacesKeyInMessages) {
  TrainConfig c;
  std::string m = error_of([&] { apply_setting("epochs", "x", c, "--epochs"); });
  EXPECT_CONTAINS(m, "--epochs");
}

TEST(ConfigNames, RoundTripThroughTheirKeys) {
  for (OverflowPolicy p : {OverflowPolicy::Skip, OverflowPolicy::Apply, OverflowPolicy::Retry})
    EXPECT_EQ(with("overflow_policy", policy_name(p)).scaler.policy, p);
  for (OptimizerKind k : {OptimizerKind::SGD, OptimizerKind::Adam, OptimizerKind::AdamW})
    EXPECT_EQ(with("optimizer", optimizer_name(k)).optimizer.kind, k);
  for (LrSchedule s : {LrSchedule::Constant, LrSchedule::Step, LrSchedule::Cosine})
    EXPECT_EQ(with("lr_schedule", schedule_name(s)).optimizer.schedule, s);
  EXPECT_STREQ(scale_mode_name(LossScaleMode::Dynamic), "dynamic");
  EXPECT_STREQ(scale_mode_name(LossScaleMode::Static), "static");
  EXPECT_STREQ(scale_mode_name(LossScaleMode::None), "none");
  EXPECT_EQ(with("loss_scaling_factor", scale_mode_name(LossScaleMode::None)).scaler.mode,
            LossScaleMode::None);
  // Per-layer scaling: YAML's per_layer, and the flag's per-layer.
  EXPECT_STREQ(scale_mode_name(LossScaleMode::PerLayer), "per_layer");
  EXPECT_EQ(with("loss_scaling_factor", "per_layer").scaler.mode, LossScaleMode::PerLayer);
  EXPECT_EQ(with("loss_scaling_factor", "Per-Layer").scaler.mode, LossScaleMode::PerLayer);
}

// Per-layer scaling refuses clipping by the global norm, which amp_check
// sums over gradients that carry different scales.
TEST(ConfigRules, PerLayerScalingRefusesClippingByNorm) {
  TrainConfig c;
  c.scaler.mode = LossScaleMode::PerLayer;
  validate(c);
  c.clip.max_norm = 1;
  try {
    validate(c);
    FAIL() << "max_gradient_norm with per-layer scaling was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--max-gradient-norm"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--loss-scale per-layer"), std::string::npos) << e.what();
  }
}

// ---- step lists --------------------------------------------------------------

TEST(ConfigStepRanges, ParsesSinglesAndRanges) {
  auto r = parse_step_ranges("120,300-305, 7 ,9-9");
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].first, 120u);
  EXPECT_EQ(r[0].last, 120u);
  EXPECT_EQ(r[1].first, 300u);
  EXPECT_EQ(r[1].last, 305u);
  EXPECT_EQ(r[2].first, 7u);
  EXPECT_EQ(r[2].last, 7u);
  EXPECT_EQ(r[3].first, 9u);
  EXPECT_EQ(r[3].last, 9u);
  EXPECT_TRUE(parse_step_ranges("").empty());
  EXPECT_EQ(parse_step_ranges("0")[0].first, 0u);
}

TEST(ConfigStepRanges, RejectsBadLists) {
  for (const char* bad :
       {"5-3", "a", "1,,2", "1,", ",1", "-5", "3-", "1-2-3", "1.5", "12abc", "99999999999999999999"}) {
    SCOPED_TRACE(bad);
    EXPECT_CONTAINS(error_of([&] { parse_step_ranges(bad); }), bad);
  }
  EXPECT_CONTAINS(error_of([] { with("inject_overflow", "5-3"); }), "inject_overflow");
}

// ---- validate() --------------------------------------------------------------

TEST(ConfigValidate, BothClipKnobsNameBothFlags) {
  TrainConfig c;
  c.clip.max_norm = 1.0;
  c.clip.max_value = 0.5;
  std::string m = error_of([&] { validate(c); });
  EXPECT_CONTAINS(m, "--max-gradient-norm");
  EXPECT_CONTAINS(m, "--max-gradient-value");
  EXPECT_CONTAINS(m, "max_gradient_norm");
  EXPECT_CONTAINS(m, "max_gradient_value");
  c.clip.max_value = 0;
  EXPECT_NO_THROW(validate(c));
}

TEST(ConfigValidate, ZeroAndNegativeScales) {
  {
    TrainConfig c;
    c.scaler.initial_loss_scale = 0;
    EXPECT_CONTAINS(error_of([&] { validate(c); }), "initial-loss-scale");
  }
  {
    TrainConfig c;
    c.scaler.mode = LossScaleMode::Static;
    c.scaler.initial_loss_scale = -128;
    EXPECT_CONTAINS(error_of([&] { validate(c); }), "--loss-scale");
  }
  {
    TrainConfig c;
    c.scaler.min_loss_scale = 0;
    EXPECT_CONTAINS(error_of([&] { validate(c); }), "min_loss_scale");
  }
  {
    TrainConfig c;
    c.scaler.max_loss_scale = -1;
    EXPECT_CONTAINS(error_of([&] { validate(c); }), "max_loss_scale");
  }
  {
    TrainConfig c;
    c.scaler.max_loss_scale = INFINITY;  // the scale must never be able to become inf
    EXPECT_CONTAINS(error_of([&] { validate(c); }), "max_loss_scale");
  }
}

TEST(ConfigValidate, ScaleBounds) {
  TrainConfig c;
  c.scaler.min_loss_scale = 1024;
  c.scaler.max_loss_scale = 512;
  c.scaler.initial_loss_scale = 768;
  std::string m = error_of([&] { validate(c); });
  EXPECT_CONTAINS(m, "min_loss_scale");
  EXPECT_CONTAINS(m, "max_loss_scale");

  TrainConfig d;  // Cerebras max 2^15 with PyTorch's initial 2^16
  d.scaler.max_loss_scale = 32768;
  EXPECT_CONTAINS(error_of([&] { validate(d); }), "initial_loss_scale");
  d.scaler.mode = LossScaleMode::Static;  // bounds only bind dynamic scaling
  EXPECT_NO_THROW(validate(d));
  d.scaler.mode = LossScaleMode::Dynamic;
  d.scaler.initial_loss_scale = 32768;
  EXPECT_NO_THROW(validate(d));
}

TEST(ConfigValidate, FactorsAndOptimizerRanges) {
  auto fails = [](auto edit, const char* needle) {
    TrainConfig c;
    edit(c);
    EXPECT_CONTAINS(error_of([&] { validate(c); }), needle);
  };
  fails([](TrainConfig& c) { c.scaler.growth_factor = 1.0; }, "growth_factor");
  fails([](TrainConfig& c) { c.scaler.backoff_factor = 1.0; }, "backoff_factor");
  fails([](TrainConfig& c) { c.scaler.backoff_factor = 0.0; }, "backoff_factor");
  fails([](TrainConfig& c) { c.optimizer.lr = -0.01; }, "lr");
  fails([](TrainConfig& c) { c.optimizer.weight_decay = -1; }, "weight_decay");
  fails([](TrainConfig& c) { c.optimizer.beta1 = 1.0; }, "beta1");
  fails([](TrainConfig& c) { c.optimizer.beta2 = 1.5; }, "beta2");
  fails([](TrainConfig& c) { c.optimizer.eps = 0; }, "eps");
  fails([](TrainConfig& c) { c.batch = 0; }, "batch");
  fails([](TrainConfig& c) { c.grad_accum = 0; }, "grad_accum");
  fails([](TrainConfig& c) { c.scaler.steps_per_increase = 0; }, "steps_per_increase");
  fails([](TrainConfig& c) { c.resume = true; }, "--checkpoint");
}

// ---- YAML files --------------------------------------------------------------

TEST(ConfigFile, ReadsCerebrasStyleFile) {
  TempDir dir;
  std::string f = dir.write("cs.yaml",
                            "# Cerebras-style mixed precision\n"
                            "\n"
                            "fp16_type: cbfloat16\n"
                            "loss_scaling_factor: dynamic   # grows and backs off\n"
                            "initial_loss_scale: 32768\n"
                            "steps_per_increase: 2000\n"
                            "min_loss_scale: 6.103515625e-05\n"
                            "max_loss_scale: 32768\n"
                            "max_gradient_norm: 1.0\n"
                            "   \n"
                            "data: \"/data/my # dir\"\n"
                            "device: 'llvm''pipe'\n"
                            "metrics: \"\"\n");
  RunOptions c;
  c.metrics_path = "was set";
  apply_config_file(f, c);
  EXPECT_EQ(c.precision, Format::CB16);
  EXPECT_EQ(c.scaler.mode, LossScaleMode::Dynamic);
  EXPECT_EQ(c.scaler.initial_loss_scale, 32768.0);
  EXPECT_EQ(c.scaler.steps_per_increase, 2000u);
  EXPECT_EQ(c.scaler.min_loss_scale, std::ldexp(1.0, -14));
  EXPECT_EQ(c.scaler.max_loss_scale, 32768.0);
  EXPECT_EQ(c.clip.max_norm, 1.0);
  EXPECT_EQ(c.data_dir, "/data/my # dir");
  EXPECT_EQ(c.device, "llvm'pipe");
  EXPECT_EQ(c.metrics_path, "");
  EXPECT_NO_THROW(validate(c));
}

TEST(ConfigFile, CrlfAndDocumentMarker) {
  TempDir dir;
  std::string f = dir.write("w.yaml", "---\r\nepochs: 3\r\nlr: '0.5'\r\n");
  TrainConfig c;
  apply_config_file(f, c);
  EXPECT_EQ(c.epochs, 3u);
  EXPECT_EQ(c.optimizer.lr, 0.5);
}

TEST(ConfigFile, UnknownKeyReportsFileLineAndKey) {
  TempDir dir;
  std::string f = dir.write("u.yaml", "epochs: 3\n# comment\nmax_grad_norm: 1.0\n");
  TrainConfig c;
  std::string m = error_of([&] { apply_config_file(f, c); });
  EXPECT_CONTAINS(m, f + ":3:");
  EXPECT_CONTAINS(m, "max_grad_norm");
  EXPECT_CONTAINS(m, "max_gradient_norm");  // the suggestion
}

TEST(ConfigFile, BadValueReportsFileLineAndKey) {
  TempDir dir;
  std::string f = dir.write("b.yaml", "epochs: 3\nbatch: 12abc\n");
  TrainConfig c;
  std::string m = error_of([&] { apply_config_file(f, c); });
  EXPECT_CONTAINS(m, f + ":2:");
  EXPECT_CONTAINS(m, "batch");
  EXPECT_CONTAINS(m, "12abc");
}

TEST(ConfigFile, MalformedLinesAreErrors) {
  TempDir dir;
  TrainConfig c;
  const std::pair<const char*, const char*> cases[] = {
      {"just text\n", "key: value"},
      {"lr:0.1\n", "key: value"},
      {"scaler:\n  initial_loss_scale: 8\n", "scaler"},  // nesting: unknown key first
      // yaml-cpp's words for an indented line after a value (the old reader said "nested").
      {"epochs: 2\n  lr: 0.1\n", ":2: YAML syntax error: illegal map value"},
      {"lr:\n", "no value"},
      {"lr: ~\n", "no value"},  // YAML null
      // yaml-cpp ends an unclosed quote at the end of the file ("0.1 "), which the strict number parser refuses.
      {"lr: \"0.1\n", "lr"},
      {"lr: 0.1\nlearning_rate: 0.2\n", "twice"},
      {"- lr: 1\n", "list"},
      {"lr: [0.1, 0.2]\n", "expected a single value, got a list"},
      {"lr: {a: 1}\n", "expected a single value, got a map"},
      {"lr: 0.1\n---\nlr: 0.2\n", "more than one YAML document"},
  };
  int n = 0;
  for (const auto& [text, needle] : cases) {
    SCOPED_TRACE(text);
    std::string f = dir.write("m" + std::to_string(n++) + ".yaml", text);
    std::string m = error_of([&] { apply_config_file(f, c); });
    EXPECT_CONTAINS(m, f + ":");
    EXPECT_CONTAINS(m, needle);
  }
}

TEST(ConfigFile, MissingFileIsNamed) {
  TempDir dir;
  TrainConfig c;
  std::string p = dir.path("absent.yaml");
  EXPECT_CONTAINS(error_of([&] { apply_config_file(p, c); }), p);
}

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
