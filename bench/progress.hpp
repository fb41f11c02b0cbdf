#pragma once
// The sweep's progress on stderr, drawn by the one progress bar
// (core/progress.hpp): on a terminal one bar redrawn in place, otherwise a
// plain line at most every kProgressLineIntervalSeconds. The ETA weighs the
// shapes left in each bucket by the mean time a shape of that bucket has
// taken in this session (small and large shapes differ by orders of magnitude).
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench/record.hpp"
#include "core/progress.hpp"
#include "core/stats.hpp"

namespace tessera::bench {

class SweepProgress {
public:
  // remaining: shapes left per bucket at the start; done_before: finished in earlier sessions.
  SweepProgress(std::FILE* out, int total, int done_before, std::map<std::string, int> remaining);
  void shape_done(const ShapeRecord& record);
  void finish(const std::string& how);
  // "412/1000 shapes | ETA 6m12s | 1.4 s/shape | geomean 1.031x (120) | last 4096x4096x4096 0.981x"
  std::string text() const;
  double eta_seconds() const;  // -1 when nothing has been measured yet

private:
  double fraction() const;

  ProgressBar bar_;
  int total_, done_;
  std::map<std::string, int> remaining_;
  std::map<std::string, std::pair<int, double>> timed_;  // bucket -> (shapes, seconds) this session
  stats::GeometricMean speedups_;  // over the baseline-max speedups
  std::string last_;
  double started_at_;
};

// "45s", "6m12s", "2h05m".
std::string format_duration(double seconds);

}  // namespace tessera::bench
