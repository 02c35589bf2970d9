// A one-line progress bar on stderr for long runs. On a terminal it redraws
// in place a few times a second; elsewhere (logs, CI) it prints a line every
// 10% so the log stays short, with no carriage returns or escape codes.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace vkamp::app {

class ProgressBar {
 public:
  ProgressBar(std::string label, uint64_t total, bool enabled = true);
  ~ProgressBar();
  // `done` of `total`, with a short status such as "loss 0.41 scale 65536".
  void update(uint64_t done, const std::string& status);
  // On a terminal, erases the bar's line, so that other lines (an epoch's)
  // can be printed there; the next update draws it again.
  void clear();
  void finish();
  // Whether the bar redraws in place on a terminal (not in a log).
  bool on_terminal() const { return enabled_ && tty_; }

 private:
  void draw(uint64_t done, const std::string& status);

  std::string label_;
  uint64_t total_;
  bool enabled_, tty_, finished_ = false, shown_ = false;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, last_draw_;
  uint64_t last_done_ = 0;
  std::string last_status_;
};

}  // namespace vkamp::app
