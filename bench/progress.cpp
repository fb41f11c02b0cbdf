#include "bench/progress.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "bench/table.hpp"

namespace tessera::bench {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string last_text(const ShapeRecord& r) {
  const ShapeRow row = shape_row(r);
  if (row.kernel_us && row.speedup.count("baseline-max"))
    return fmt::format("{} {:.3f}x", r.task.shape(), row.speedup.at("baseline-max"));
  if (r.kernel) return fmt::format("{} {}", r.task.shape(), row.status);
  if (row.best_baseline_us)
    return fmt::format("{} {} {:.1f} TFLOP/s", r.task.shape(), row.best_baseline,
                       r.task.tflops_at(*row.best_baseline_us));
  return fmt::format("{} {}", r.task.shape(), r.note.empty() ? "not measured" : r.note);
}

}  // namespace

std::string format_duration(double s) {
  if (s < 0) return "?";
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{}m{:02d}s", int(s) / 60, int(s) % 60);
  return fmt::format("{}h{:02d}m", int(s) / 3600, int(s) % 3600 / 60);
}

SweepProgress::SweepProgress(std::FILE* out, int total, int done_before, std::map<std::string, int> remaining)
    : bar_("bench", out), total_(total), done_(done_before), remaining_(std::move(remaining)), started_at_(now_s()) {
  bar_.update(fraction(), text());
}

double SweepProgress::fraction() const { return total_ > 0 ? std::min(1.0, double(done_) / total_) : 1.0; }

double SweepProgress::eta_seconds() const {
  int shapes = 0;
  double seconds = 0;
  for (const auto& [b, t] : timed_) shapes += t.first, seconds += t.second;
  if (shapes == 0) return -1;
  const double overall = seconds / shapes;
  double eta = 0;
  for (const auto& [bucket, left] : remaining_) {
    auto it = timed_.find(bucket);
    eta += left * (it == timed_.end() ? overall : it->second.second / it->second.first);
  }
  return eta;
}

std::string SweepProgress::text() const {
  int shapes = 0;
  double seconds = 0;
  for (const auto& [b, t] : timed_) shapes += t.first, seconds += t.second;
  std::string s = fmt::format("{}/{} shapes | ETA {}", done_, total_, shapes ? format_duration(eta_seconds()) : "-");
  if (shapes) s += fmt::format(" | {:.1f} s/shape", seconds / shapes);
  if (speedups_.count()) s += fmt::format(" | geomean {:.3f}x ({})", speedups_.value(), speedups_.count());
  if (!last_.empty()) s += " | last " + last_;
  return s;
}

void SweepProgress::shape_done(const ShapeRecord& r) {
  ++done_;
  if (auto it = remaining_.find(r.bucket); it != remaining_.end() && it->second > 0) --it->second;
  auto& t = timed_[r.bucket];
  ++t.first;
  t.second += r.wall_s;
  const ShapeRow row = shape_row(r);
  if (auto it = row.speedup.find("baseline-max"); it != row.speedup.end()) speedups_.add(it->second);
  last_ = last_text(r);
  bar_.update(fraction(), text());
}

void SweepProgress::finish(const std::string& how) {
  bar_.finish(fraction(), fmt::format("{}: {} (this session {})", how, text(), format_duration(now_s() - started_at_)));
}

}  // namespace tessera::bench
