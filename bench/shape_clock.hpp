#pragma once
// How long the next shape of a sweep should take, from the shapes the run
// has recorded: `--max-minutes` stops before a shape that would not finish in
// the minutes left, instead of starting it and cutting it short unrecorded
// (on one H200, three chained 6-9 minute calls of the LLM set's largest
// shapes lost 5.3 of their 24.6 minutes of sweep that way).
#include <optional>
#include <vector>

#include "core/task.hpp"

namespace tessera::bench {

class ShapeClock {
public:
  // A shape the run recorded: its task and the wall time it took in the sweep.
  void add(const Task& task, double wall_s);
  // Seconds `task` should take: a line a + b·FLOP fitted by least squares to
  // the recorded shapes (a: what every shape costs, compiling and timing the
  // baselines; b: what grows with the work, the kernels' and the reference's
  // time). nullopt with fewer than kMinShapes recorded, or fewer than two sizes.
  std::optional<double> seconds_for(const Task& task) const;
  std::size_t shapes() const { return points_.size(); }

  static constexpr std::size_t kMinShapes = 3;

private:
  struct Point {
    double flops, wall_s;
  };
  std::vector<Point> points_;
};

}  // namespace tessera::bench
