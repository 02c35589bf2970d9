// The Trainer's checkpoints: every --checkpoint-every steps during the run
// (the final one is written by finish()), on request, and --resume's load.
#include "vkamp/train/trainer.hpp"

#include "vkamp/train/batch_feeder.hpp"
#include "vkamp/train/checkpointer.hpp"
#include "vkamp/train/replica_check.hpp"
#include "vkamp/train/step_params.hpp"

namespace vkamp::train {

void Trainer::checkpoint_if_due() {
  const uint32_t submitted = ring_->submitted();
  if (!cfg_.checkpoint_every || cfg_.checkpoint_path.empty() || submitted == 0 ||
      submitted % cfg_.checkpoint_every != 0 || last_checkpoint_ == submitted)
    return;
  const uint64_t w = ctx_.host_waits();
  // The last good checkpoint is kept: weights that went non-finite in an
  // update no step record has reported yet must not overwrite it.
  TrainState st = read_state();
  // BatchNorm's running statistics are each rank's own until the next
  // replica check averages them: the checkpoint keeps every rank's, so a
  // resumed run goes on as the uninterrupted one (a collective: every rank).
  std::vector<float> rank_buffers;
  if (exchange_ && !model_->buffers().empty()) rank_buffers = gather_buffers(comm_, *model_);
  // Rank 0 writes for all: the replicas are identical (check_replicas_if_due).
  if (comm_.rank() == 0 && !failed_seen_ && !st.failed && st.nonfinite_master == 0)
    checkpointer_->save(cfg_.checkpoint_path, st, params_->read_auto_scale(),
                        rank_buffers.empty() ? nullptr : &rank_buffers);
  last_checkpoint_ = submitted;
  checkpoint_waits_ += ctx_.host_waits() - w;
}

void Trainer::save_checkpoint(const std::string& path) {
  flush();
  if (comm_.rank() != 0) return;  // the replicas are identical: rank 0 writes for all
  checkpointer_->save(path, params_->read_state(), params_->read_auto_scale());
}

void Trainer::load_checkpoint(const std::string& path) {
  flush();
  AutoScaleState auto_scale;
  TrainState st = checkpointer_->load(path, auto_scale);
  steps_before_ = st.step;
  params_->write_auto_scale(auto_scale);
  st.done = st.applied >= budget_ ? 1u : 0u;  // a longer run may continue a finished one
  st.replay = 0;                              // replays count from this trainer's start
  params_->write_state(st);
  ring_->restart();
  stop_seen_ = failed_seen_ = false;
  tally_.set_applied(st.applied);
  last_applied_ = st.applied;
  cursor_seen_ = st.cursor;
  feeder_->restart();
  next_epoch_end_ = eval_period_ ? (st.applied / eval_period_ + 1) * eval_period_ : 0;
  epoch_ended_.reset();
}

}  // namespace vkamp::train
