#include "search/progress.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/progress.hpp"

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

double fraction(const ProgressSnapshot& s) {
  return s.budget_steps > 0 ? std::min(1.0, double(s.totals.steps) / double(s.budget_steps)) : 0;
}

class BarProgress final : public ProgressSink {
public:
  explicit BarProgress(std::FILE* out) : bar_("search", out) {}
  void update(const ProgressSnapshot& s) override { bar_.update(fraction(s), progress_text(s)); }
  void finish(const ProgressSnapshot& s) override { bar_.finish(fraction(s), "done: " + progress_text(s)); }
  void message(const std::string& line) override { bar_.message(line); }

private:
  ProgressBar bar_;
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
  return std::make_unique<BarProgress>(out);
}

}  // namespace tessera::search
