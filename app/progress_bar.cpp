#include "app/progress_bar.hpp"

#include <cstdio>
#include "vkamp/platform.hpp"

namespace vkamp::app {

ProgressBar::ProgressBar(std::string label, uint64_t total, bool enabled)
    : label_(std::move(label)), total_(total ? total : 1), enabled_(enabled), tty_(vkamp::platform::is_terminal(stderr)),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(uint64_t done, const std::string& status) {
  if (!enabled_ || finished_) return;
  last_done_ = done;
  last_status_ = status;
  auto now = std::chrono::steady_clock::now();
  if (tty_) {
    if (now - last_draw_ < std::chrono::milliseconds(100) && done < total_) return;
    last_draw_ = now;
    draw(done, status);
  } else {
    int decile = int(10 * done / total_);
    if (decile == last_decile_) return;
    last_decile_ = decile;
    draw(done, status);
  }
}

void ProgressBar::draw(uint64_t done, const std::string& status) {
  const int width = 30;
  double frac = std::min(1.0, double(done) / double(total_));
  int filled = int(frac * width);
  std::string bar(filled, '=');
  if (filled < width) bar += '>' + std::string(width - filled - 1, ' ');
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double eta = frac > 0 ? secs * (1 - frac) / frac : 0;
  std::fprintf(stderr, "%s%s [%s] %3d%% %llu/%llu  %s  %.0fs, eta %.0fs%s", tty_ ? "\r" : "", label_.c_str(),
               bar.c_str(), int(frac * 100), static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total_), status.c_str(), secs, eta, tty_ ? "\x1b[K" : "\n");
  std::fflush(stderr);
  shown_ = tty_;
}

void ProgressBar::clear() {
  if (!on_terminal() || !shown_) return;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
  shown_ = false;
  last_draw_ = {};  // the next update redraws at once
}

// A bar that was cleared and not drawn again stays erased.
void ProgressBar::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  if (tty_ && shown_) {
    draw(last_done_, last_status_);
    std::fputc('\n', stderr);
  }
}

}  // namespace vkamp::app
