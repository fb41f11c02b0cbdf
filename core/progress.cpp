#include "core/progress.hpp"

#include <unistd.h>

#include <algorithm>

namespace tessera {

std::string progress_bar(double fraction) {
  const double f = std::clamp(fraction, 0.0, 1.0);
  std::string bar(std::size_t(f * kProgressBarWidth), '#');
  bar.resize(kProgressBarWidth, '.');
  return "[" + bar + "]";
}

ProgressBar::ProgressBar(std::string tag, std::FILE* out)
    : tag_(std::move(tag)), out_(out), tty_(isatty(fileno(out))) {}

void ProgressBar::draw(double fraction, const std::string& text) {
  std::fprintf(out_, "\r\033[K%s %s", progress_bar(fraction).c_str(), text.c_str());
  std::fflush(out_);
}

void ProgressBar::plain(const std::string& text) {
  std::fprintf(out_, "%s: %s\n", tag_.c_str(), text.c_str());
  std::fflush(out_);
}

void ProgressBar::update(double fraction, const std::string& text) {
  if (tty_) return draw(fraction, text);
  const auto since = std::chrono::steady_clock::now() - last_line_;
  if (printed_ && since < std::chrono::duration<double>(kProgressLineIntervalSeconds)) return;
  printed_ = true;
  last_line_ = std::chrono::steady_clock::now();
  plain(text);
}

void ProgressBar::finish(double fraction, const std::string& text) {
  if (!tty_) return plain(text);
  draw(fraction, text);
  std::fprintf(out_, "\n");
  std::fflush(out_);
}

void ProgressBar::message(const std::string& line) {
  if (!tty_) return plain(line);
  // Clears the bar's line; the next update draws the bar again below.
  std::fprintf(out_, "\r\033[K%s\n", line.c_str());
  std::fflush(out_);
}

void ProgressBar::clear() {
  if (!tty_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
}

}  // namespace tessera
