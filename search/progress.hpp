#pragma once
// The search's progress on stderr, drawn by the one progress bar
// (core/progress.hpp): a bar redrawn in place on a terminal; periodic plain
// lines otherwise (logs, CI), never carriage returns in a file.
#include <cstdio>
#include <memory>
#include <string>

#include "search/state.hpp"

namespace tessera::search {

struct ProgressSnapshot {
  Totals totals;
  long long budget_steps = 0;
  double elapsed_s = 0;
  bool compile_only = false;
};

// "best 1.07x | 12/40 steps, 14 evals, 3 repeats | fail: compile_error 2 | 3100 tok $0.020 | 54s"
// (repeats: proposals that repeated an evaluated kernel and were asked again)
std::string progress_text(const ProgressSnapshot& s);

class ProgressSink {
public:
  virtual ~ProgressSink() = default;
  virtual void update(const ProgressSnapshot& s) = 0;
  virtual void finish(const ProgressSnapshot& s) = 0;
  // A line the user must see now (an endpoint error, a budget stop), on its
  // own line even while a bar is drawn.
  virtual void message(const std::string& line) = 0;
};

// Writes to `out` (stderr by default); the bar only when it is a terminal.
// Quiet: messages only, no progress.
std::unique_ptr<ProgressSink> make_progress(std::FILE* out = stderr, bool quiet = false);

}  // namespace tessera::search
