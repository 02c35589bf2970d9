// The table of Model Zoo's trainer arguments (model_zoo_args.hpp).
#include "model_zoo_args.hpp"

namespace vkamp::config::model_zoo {

// trainer.init.precision: Model Zoo's MixedPrecision callback.
const Args kPrecisionArgs = {
    {"enabled", Use::Special},
    {"fp16_type", Use::Set, "fp16_type"},
    {"loss_scaling_factor", Use::Set, "loss_scaling_factor"},
    {"initial_loss_scale", Use::Set, "initial_loss_scale"},
    {"steps_per_increase", Use::Set, "steps_per_increase"},
    {"min_loss_scale", Use::Set, "min_loss_scale"},
    {"max_loss_scale", Use::Set, "max_loss_scale"},
    {"max_gradient_norm", Use::Set, "max_gradient_norm"},
    {"max_gradient_value", Use::Set, "max_gradient_value"},
    {"log_loss_scale", Use::Note, "it only logs the scale; vkamp's --metrics log records loss_scale at every step"},
    {"precision_opt_level", Use::Set, "precision_opt_level"},  // onto amp_level (docs/config.md)
};

const char* const kScheduleOwnsLr = "the schedule's initial rate sets the learning rate, as in Model Zoo";
namespace {
const Args kAdamArgs = {
    {"lr", Use::Set, "learning_rate"},
    {"betas", Use::Special},
    {"eps", Use::Set, "eps"},
    {"weight_decay", Use::Set, "weight_decay"},
    {"amsgrad", Use::Only, "vkamp's Adam has no AMSGrad variant", "false"},
};
Args with(Args a, const Arg& more) {
  a.push_back(more);
  return a;
}
}  // namespace
const std::vector<OptimizerClass> kOptimizerClasses = {
    {"SGD", "sgd",
     {{"lr", Use::Set, "learning_rate"},
      {"momentum", Use::Set, "momentum"},
      {"weight_decay", Use::Set, "weight_decay"},
      {"dampening", Use::Only, "vkamp's momentum has no dampening", "0"},
      {"nesterov", Use::Only, "vkamp's momentum is not Nesterov's", "false"},
      {"maximize", Use::Only, "vkamp minimizes the loss", "false"}},
     {{"momentum", "0"}, {"weight_decay", "0"}}},
    {"Adam", "adam", kAdamArgs,
     {{"learning_rate", "0.001"}, {"beta1", "0.9"}, {"beta2", "0.999"}, {"eps", "1e-6"}, {"weight_decay", "0"}}},
    {"AdamW", "adamw",
     with(kAdamArgs, {"correct_bias", Use::Only, "vkamp's AdamW always corrects the moments' bias", "true"}),
     {{"learning_rate", "0.001"}, {"beta1", "0.9"}, {"beta2", "0.999"}, {"eps", "1e-6"}, {"weight_decay", "0"}}},
};
// The older layout's names (optimizer_type: SGD, learning_rate: ...).
const Args kOptimizerArgs = {
    {"optimizer_type", Use::Set, "optimizer"},
    {"learning_rate", Use::Set, "learning_rate"},
    {"momentum", Use::Set, "momentum"},
    {"weight_decay", Use::Set, "weight_decay"},
};

// trainer.init.loop: Model Zoo's TrainingLoop.
const Args kLoopArgs = {
    {"max_steps", Use::Set, "max_steps"},
    {"num_steps", Use::Set, "max_steps"},
    {"num_epochs", Use::Set, "epochs"},
    {"eval_frequency", Use::Special},
    {"eval_steps", Use::Set, "eval_iters"},
    {"grad_accum_steps", Use::Set, "grad_accum"},
    {"steps_per_epoch", Use::Refuse, "an epoch is one pass over the training set in vkamp; use max_steps"},
};

// trainer.init.checkpoint: Model Zoo's Checkpoint callback. The file is
// vkamp's `checkpoint` setting (Model Zoo writes into model_dir).
const Args kCheckpointArgs = {
    {"steps", Use::Set, "checkpoint_every"},
    {"save_initial_checkpoint", Use::Only, "vkamp writes no checkpoint before the first step", "false"},
    {"autoload_last_checkpoint", Use::Note, "vkamp resumes only with --resume from the --checkpoint file"},
    {"disable_strict_checkpoint_loading", Use::Note, "vkamp's checkpoints always hold the whole model"},
    {"checkpoint_name", Use::Note, "vkamp's checkpoint is the one file --checkpoint names"},
};

// The learning-rate schedules vkamp has, in cstorch's scheduler names.
const Args kScheduleArgs = {
    {"learning_rate", Use::Special},         {"initial_learning_rate", Use::Special},
    {"end_learning_rate", Use::Special},     {"total_iters", Use::Special},
    {"step_size", Use::Special},             {"gamma", Use::Special},
    {"schedulers", Use::Special},            {"milestones", Use::Note, "the phases' total_iters set them"},
    {"param_group_tags", Use::Refuse, "vkamp schedules every parameter alike"},
};
const std::vector<std::string> kVkampSchedules = {"ConstantLR", "StepLR", "CosineDecayLR", "SequentialLR"};
const char* const kScheduleShapes =
    "vkamp's schedules are ConstantLR, StepLR, CosineDecayLR to 0, and SequentialLR of a LinearLR warm-up from 0 "
    "followed by a CosineDecayLR to 0";
// cstorch.optim's other schedulers: known, so not "did you mean".
const std::vector<std::string> kOtherSchedules = {
    "LinearLR",        "PolynomialLR",      "ExponentialLR",           "InverseExponentialTimeDecayLR",
    "InverseSquareRootDecayLR", "PiecewiseConstantLR", "MultiStepLR", "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts", "LambdaLR", "MultiplicativeLR", "ChainedScheduler", "CyclicLR", "OneCycleLR"};

// The Trainer's sections vkamp reads, and those it does not use.
const std::vector<std::string> kInitRead = {"precision", "optimizer", "schedulers", "loop", "checkpoint", "seed"};
const std::vector<std::string> kInitUnused = {"device",  "backend", "model_dir", "model",       "sparsity",
                                              "logging", "callbacks", "loggers", "autorestart"};
const std::vector<std::string> kTrainerUnused = {"validate", "validate_all"};

}  // namespace vkamp::config::model_zoo
