#pragma once
// One progress display for long work (a search, a bench sweep, a tile tune),
// on stderr by default: on a terminal a bar redrawn in place; otherwise
// (logs, CI) a plain line at most every kProgressLineIntervalSeconds, never
// a carriage return in a file.
#include <chrono>
#include <cstdio>
#include <string>

namespace tessera {

inline constexpr double kProgressLineIntervalSeconds = 10.0;  // not a terminal: at most one line per interval
inline constexpr int kProgressBarWidth = 24;                  // characters between the brackets

// "[######..................]": `fraction` (clamped to [0, 1]) of the width filled.
std::string progress_bar(double fraction);

class ProgressBar {
public:
  // `tag` opens every plain line ("search: ..."), so a log says whose it is.
  explicit ProgressBar(std::string tag, std::FILE* out = stderr);
  bool on_terminal() const { return tty_; }

  // The state now. On a terminal "[bar] text" in place of the last one;
  // otherwise "tag: text", the first at once, then at most one per interval.
  void update(double fraction, const std::string& text);
  // The last state, always shown: on a terminal the bar drawn once more and
  // its line ended; otherwise "tag: text".
  void finish(double fraction, const std::string& text);
  // A line the user must see now: on a terminal it takes the bar's line (the
  // next update draws the bar again below it); otherwise "tag: line".
  void message(const std::string& line);
  // Gone without a trace: on a terminal the bar's line is erased, for output
  // that follows on it (a table row); nothing otherwise.
  void clear();

private:
  void draw(double fraction, const std::string& text);
  void plain(const std::string& text);

  std::string tag_;
  std::FILE* out_;
  bool tty_;
  bool printed_ = false;  // an update's plain line was written (the first is never held back)
  std::chrono::steady_clock::time_point last_line_;
};

}  // namespace tessera
