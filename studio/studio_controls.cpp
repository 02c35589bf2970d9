#include "studio_controls.hpp"

#include <imgui.h>

#include <cmath>

#include "app/run_outputs.hpp"
#include "app/workloads.hpp"
#include "dashboard/setting_labels.hpp"

namespace vkamp::ui {
namespace {

const ImVec4 kError(1.0f, 0.45f, 0.4f, 1.0f);

// Runs `check` (which throws ConfigError) and keeps its message.
template <class F>
bool accepted(StudioControls& c, F&& check) {
  try {
    check();
    c.error.clear();
    return true;
  } catch (const std::exception& e) {
    c.error = e.what();
    return false;
  }
}

void section(const char* title) {
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::TextDisabled("%s", title);
}

// A setting's --help line when the mouse is over the last item.
void tooltip(const char* key) {
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", setting_tooltip(key).c_str());
}

// Inputs for a training setting, labelled with its flag (setting_labels.hpp).
bool input_double(const char* key, double& v) {
  bool changed = ImGui::InputDouble(setting_label(key).c_str(), &v, 0, 0, "%g");
  tooltip(key);
  return changed;
}

bool input_u32(const char* key, uint32_t& v) {
  int i = int(std::min<uint32_t>(v, 1u << 30));
  bool changed = ImGui::InputInt(setting_label(key).c_str(), &i, 0, 0);
  tooltip(key);
  if (changed) v = i < 0 ? 0 : uint32_t(i);
  return changed;
}

// A path field as wide as the column leaves beside its button.
void path_field(const char* id, char* buf, size_t size, const char* button) {
  const ImGuiStyle& st = ImGui::GetStyle();
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(button).x -
                          2 * st.FramePadding.x - st.ItemSpacing.x);
  ImGui::InputText(id, buf, size);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", buf);
  ImGui::SameLine();
}

void run_buttons(StudioControls& c, TrainingSession& session) {
  SessionState s = session.state();
  ImGui::Text("Run: %s", state_name(s));
  bool live = s == SessionState::Running || s == SessionState::Paused;
  ImGui::BeginDisabled(!live);
  if (ImGui::Button(s == SessionState::Paused ? "Resume" : "Pause", ImVec2(90, 0)))
    session.pause(s != SessionState::Paused);
  ImGui::SameLine();
  ImGui::BeginDisabled(s != SessionState::Paused);
  if (ImGui::Button("Step", ImVec2(70, 0))) session.step_once();
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button("Inject overflow")) {
    session.inject_overflow();
    c.notice = "inf injected into the next step's gradients";
  }
  ImGui::EndDisabled();
}

void new_run(StudioControls& c, TrainingSession& session) {
  section("New run");
  const auto& jobs = c.jobs;
  // vkamp-studio's own flag, not a training setting.
  if (ImGui::BeginCombo("--sample", jobs[c.sample].name.c_str())) {
    for (int i = 0; i < int(jobs.size()); ++i)
      if (ImGui::Selectable(jobs[i].name.c_str(), i == c.sample)) {
        std::string device = c.cfg.device;
        c.sample = i;
        c.cfg = jobs[i].defaults;  // each sample's own defaults
        c.cfg.device = device;
      }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("--sample NAME: the job to train (vkamp-studio --help)");
  const Format formats[] = {Format::F32, Format::F16, Format::BF16, Format::CB16};
  if (ImGui::BeginCombo(setting_label("precision").c_str(), format_name(c.cfg.precision))) {
    for (Format f : formats)
      if (ImGui::Selectable(format_name(f), f == c.cfg.precision)) c.cfg.precision = f;
    ImGui::EndCombo();
  }
  tooltip("precision");
  // --loss-scale dynamic | none | a fixed scale: the radio picks the mode,
  // the field below holds the fixed scale or dynamic scaling's first one.
  int mode = int(c.cfg.scaler.mode);
  ImGui::RadioButton("dynamic", &mode, int(config::LossScaleMode::Dynamic));
  tooltip("loss_scaling_factor");
  ImGui::SameLine();
  ImGui::RadioButton("static", &mode, int(config::LossScaleMode::Static));
  tooltip("loss_scaling_factor");
  ImGui::SameLine();
  ImGui::RadioButton("none", &mode, int(config::LossScaleMode::None));
  tooltip("loss_scaling_factor");
  c.cfg.scaler.mode = config::LossScaleMode(mode);
  if (c.cfg.scaler.mode != config::LossScaleMode::None)
    input_double(c.cfg.scaler.mode == config::LossScaleMode::Static ? "loss_scaling_factor" : "initial_loss_scale",
                 c.cfg.scaler.initial_loss_scale);
  input_u32("epochs", c.cfg.epochs);
  input_u32("batch", c.cfg.batch);
  input_double("lr", c.cfg.optimizer.lr);
  if (ImGui::Button("Start new run", ImVec2(-1, 0))) {
    if (accepted(c, [&] { app::validate(c.cfg); })) {
      // Beside the earlier runs' --metrics, --save, ... files, not over them.
      const app::RunOptions run = app::with_numbered_outputs(c.cfg, ++c.runs);
      session.start(jobs[c.sample], run);
      c.running = run;
      c.knobs = run.scaler;
      std::string files;
      for (const std::string& f : {run.metrics_path, run.save_path, run.checkpoint_path, run.report_path})
        if (!f.empty()) files += (files.empty() ? ", writing " : ", ") + f;
      c.notice = "started " + jobs[c.sample].name + files;
    }
  }
}

void live_knobs(StudioControls& c, TrainingSession& session) {
  section("Dynamic scaling, live");
  bool dynamic = c.knobs.mode == config::LossScaleMode::Dynamic;
  ImGui::BeginDisabled(!dynamic);
  input_double("growth_factor", c.knobs.growth_factor);
  input_double("backoff_factor", c.knobs.backoff_factor);
  input_u32("steps_per_increase", c.knobs.steps_per_increase);
  input_double("min_loss_scale", c.knobs.min_loss_scale);
  input_double("max_loss_scale", c.knobs.max_loss_scale);
  input_u32("hysteresis", c.knobs.hysteresis);
  input_u32("fail_after_overflows", c.knobs.fail_after_overflows);
  if (ImGui::Button("Apply knobs", ImVec2(-1, 0))) {
    if (accepted(c, [&] { c.running = config::with_live_scaler(c.running, c.knobs); })) {
      session.set_scaler(c.knobs);
      c.notice = "knobs sent to the running trainer";
    }
  }
  ImGui::EndDisabled();
  if (!dynamic) ImGui::TextDisabled("(this run does not use dynamic scaling)");
}

void files(StudioControls& c, TrainingSession& session, const app::RunHistory& history) {
  section("Save");
  path_field("##ckpt", c.checkpoint_path, sizeof c.checkpoint_path, "Checkpoint");
  SessionState s = session.state();
  ImGui::BeginDisabled(s == SessionState::Idle || s == SessionState::Failed);
  if (ImGui::Button("Checkpoint")) {
    session.save_checkpoint(c.checkpoint_path);
    c.notice = std::string("saving ") + c.checkpoint_path;
  }
  ImGui::EndDisabled();
  path_field("##metrics", c.metrics_path, sizeof c.metrics_path, "Metrics");
  if (ImGui::Button("Metrics") && accepted(c, [&] { history.export_jsonl(c.metrics_path); }))
    c.notice = "wrote " + std::to_string(history.raw_steps.size()) + " step records to " + c.metrics_path;
}

}  // namespace

void draw_controls(StudioControls& c, TrainingSession& session, const app::RunHistory& history) {
  // Room on the right for the longest flag label (--fail-after-overflows).
  ImGui::PushItemWidth(100);
  run_buttons(c, session);
  new_run(c, session);
  live_knobs(c, session);
  files(c, session, history);
  ImGui::PopItemWidth();
  ImGui::Separator();
  ImGui::PushTextWrapPos(0);
  if (!c.error.empty()) ImGui::TextColored(kError, "%s", c.error.c_str());
  std::string msg = session.message();
  if (!msg.empty()) ImGui::TextUnformatted(msg.c_str());
  if (!c.notice.empty()) ImGui::TextDisabled("%s", c.notice.c_str());
  // What a fine-tune on conversations trains: its first one as the
  // template renders it, the loss's tokens in [[ ]].
  if (!history.training_sample.empty()) {
    ImGui::Separator();
    ImGui::TextUnformatted("Training sample");
    ImGui::TextDisabled("the first conversation as the chat template renders it; the loss is on [[ ]]");
    ImGui::TextUnformatted(history.training_sample.c_str());
  }
  // A language model's sample, written when its run ends.
  if (!history.generated_text.empty()) {
    ImGui::Separator();
    ImGui::TextUnformatted("Generated text");
    ImGui::TextDisabled("sampled from the trained model");
    ImGui::TextUnformatted(history.generated_text.c_str());
  }
  ImGui::PopTextWrapPos();
}

}  // namespace vkamp::ui
