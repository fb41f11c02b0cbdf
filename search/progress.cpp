#include "search/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

namespace tessera::search {

std::string progress_text(const ProgressSnapshot& s) {
  const auto& t = s.totals;
  std::string best = s.compile_only ? "compile-only (not timed)"
                     : t.any_timed  ? fmt::format("best {:.3f}x", t.best_speedup)
                                    : "best -";
  std::string fails;
  for (const auto& [status, n] : t.by_status)
    if (status != "ok" && status != "compiled") fails += fmt::format(" {} {}", status, n);
  if (t.duplicates) fails += fmt::format(" duplicate {}", t.duplicates);
  if (t.proposal_failures) fails += fmt::format(" no_proposal {}", t.proposal_failures);
  return fmt::format("{} | {}/{} steps, {} evals, {} repeats | fail:{} | {} tok ${:.3f} | {:.0f}s", best, t.steps,
                     s.budget_steps, t.evaluations, t.repeated_proposals, fails.empty() ? " none" : fails, t.tokens,
                     t.cost_usd, s.elapsed_s);
}

namespace {

class TtyProgress final : public ProgressSink {
public:
  explicit TtyProgress(std::FILE* out) : out_(out) {}
  void update(const ProgressSnapshot& s) override {
    const double frac = s.budget_steps > 0 ? std::min(1.0, double(s.totals.steps) / double(s.budget_steps)) : 0;
    const int filled = int(frac * kProgressBarWidth);
    std::string bar(filled, '#');
    bar.resize(kProgressBarWidth, '.');
    std::fprintf(out_, "\r\033[K[%s] %s", bar.c_str(), progress_text(s).c_str());
    std::fflush(out_);
  }
  void finish(const ProgressSnapshot& s) override {
    update(s);
    std::fprintf(out_, "\n");
  }
  void message(const std::string& line) override {
    // Clears the bar's line; the next update draws the bar again below.
    std::fprintf(out_, "\r\033[K%s\n", line.c_str());
    std::fflush(out_);
  }

private:
  std::FILE* out_;
};

class LineProgress final : public ProgressSink {
public:
  explicit LineProgress(std::FILE* out) : out_(out) {}
  void update(const ProgressSnapshot& s) override {
    const auto now = std::chrono::steady_clock::now();
    if (printed_ && now - last_ < std::chrono::duration<double>(kProgressLineIntervalSeconds)) return;
    printed_ = true;
    last_ = now;
    std::fprintf(out_, "search: %s\n", progress_text(s).c_str());
    std::fflush(out_);
  }
  void finish(const ProgressSnapshot& s) override {
    std::fprintf(out_, "search: done: %s\n", progress_text(s).c_str());
    std::fflush(out_);
  }
  void message(const std::string& line) override {
    std::fprintf(out_, "search: %s\n", line.c_str());
    std::fflush(out_);
  }

private:
  std::FILE* out_;
  bool printed_ = false;
  std::chrono::steady_clock::time_point last_;
};

class MessagesOnly final : public ProgressSink {
public:
  explicit MessagesOnly(std::FILE* out) : out_(out) {}
  void update(const ProgressSnapshot&) override {}
  void finish(const ProgressSnapshot&) override {}
  void message(const std::string& line) override {
    std::fprintf(out_, "search: %s\n", line.c_str());
    std::fflush(out_);
  }

private:
  std::FILE* out_;
};

}  // namespace

std::unique_ptr<ProgressSink> make_progress(std::FILE* out, bool quiet) {
  if (quiet) return std::make_unique<MessagesOnly>(out);
  if (isatty(fileno(out))) return std::make_unique<TtyProgress>(out);
  return std::make_unique<LineProgress>(out);
}

}  // namespace tessera::search
