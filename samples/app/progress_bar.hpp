// A one-line progress bar on stderr for long runs. On a terminal it redraws
// in place a few times a second; elsewhere (logs, CI) it prints a line every
// 10% so the log stays short.
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
  void finish();

 private:
  void draw(uint64_t done, const std::string& status);

  std::string label_;
  uint64_t total_;
  bool enabled_, tty_, finished_ = false;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, last_draw_;
  uint64_t last_done_ = 0;
  std::string last_status_;
};

}  // namespace vkamp::app
