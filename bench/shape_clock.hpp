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
  // Whether `task` lies past the recorded sizes (over kBeyond times the
  // largest shape's FLOP count), where the line is a guess: fitted to 16
  // shapes of at most 0.07 TFLOP, it gave the next two (1.1 TFLOP) 5.5
  // minutes each, and they took 3.5 (an H200, 2026-12-02).
  bool beyond(const Task& task) const;
  double largest_flops() const;

  static constexpr std::size_t kMinShapes = 3;
  static constexpr double kBeyond = 2.0;

private:
  struct Point {
    double flops, wall_s;
  };
  std::vector<Point> points_;
};

}  // namespace tessera::bench
