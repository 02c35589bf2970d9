// Training configuration: defaults, one setting at a time (strict values,
// ranges, names), step lists, cross-field checks and flat YAML settings
// files; the Cerebras and Model Zoo layouts and the command line are in
// test_config_files.cpp. Host only, no GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "config_test_support.hpp"

namespace vkamp::config {
namespace {

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
  EXPECT_EQ(TrainConfig{}.amp_level, AmpLevel::O2);
  EXPECT_EQ(with("amp_level", "O0").amp_level, AmpLevel::O0);
  EXPECT_EQ(with("amp_level", "o1").amp_level, AmpLevel::O1);
  EXPECT_EQ(with("amp_level", "O3").amp_level, AmpLevel::O3);
  EXPECT_EQ(with("precision_opt_level", "0").amp_level, AmpLevel::O1);
  EXPECT_EQ(with("precision_opt_level", "1").amp_level, AmpLevel::O2);
  EXPECT_EQ(with("precision_opt_level", "2").amp_level, AmpLevel::O3);
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
  EXPECT_EQ(o.amp_level, AmpLevel::O0);
  RunOptions o1;
  parse({"--amp-level", "O1", "--precision", "bf16"}, o1);
  EXPECT_EQ(o1.precision, Format::BF16);
  TrainConfig c;
  c.amp_level = AmpLevel::O0;
  EXPECT_CONTAINS(error_of([&] { validate(c); }), "--amp-level O0 (amp_level) runs everything in fp32");
  c = TrainConfig{};
  c.amp_level = AmpLevel::O1;
  c.scaler.mode = LossScaleMode::PerLayer;
  EXPECT_CONTAINS(error_of([&] { validate(c); }), "--loss-scale per-layer is not supported with --amp-level O1");
}

TEST(ConfigYaml, PrecisionOptLevelMapsOntoAmpLevels) {
  TempDir dir;
  RunOptions a, b;
  apply_config_file(dir.write("c.yaml", "trainer:\n  init:\n    precision:\n      precision_opt_level: 0\n"), a);
  apply_config_file(dir.write("f.yaml", "amp_level: O1\n"), b);
  EXPECT_EQ(a.amp_level, AmpLevel::O1);
  EXPECT_EQ(b.amp_level, AmpLevel::O1);
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
      {"data", "datasets/mnist"},
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
  EXPECT_EQ(c.data_dir, "datasets/mnist");
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

}  // namespace
}  // namespace vkamp::config
