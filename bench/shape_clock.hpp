#pragma once
// How long the next shape of a sweep should take, from the shapes the run
// has recorded: `--max-minutes` stops before a shape that would not finish in
// the minutes left, instead of starting it and cutting it short unrecorded
// (on one H200, three chained 6-9 minute calls of the LLM set's largest
// shapes lost 5.3 of their 24.6 minutes of sweep that way).
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/task.hpp"

namespace tessera::bench {

class ShapeClock {
public:
  // A shape the run recorded: its task, the wall time it took in the sweep,
  // and the device it ran on (its measured peak and DRAM bandwidth).
  void add(const Task& task, double wall_s, const DeviceSummary& device);
  // Seconds `task` should take: a line a + b·x fitted by least squares to the
  // recorded shapes (a: what every shape costs, compiling and timing the
  // baselines; b: what grows with the kernels' and the reference's time), x
  // the shape's roofline time on the recorded device, max(FLOP / peak, bytes /
  // bandwidth); FLOP alone where no record names the device's figures. The
  // kernels' time is what a shape's timing and checks repeat, and the small
  // shapes a sweep starts with are bound by their bytes: fitted by FLOP to 40
  // small LLM layers on an H200 (at most 0.008 TFLOP), the line gave four
  // large layers 7-10 times the 72-281 s they took; by roofline time 0.94-1.12
  // times (tests/bench/shape_clock_test.cpp). nullopt with fewer than
  // kMinShapes recorded, or fewer than two sizes.
  std::optional<double> seconds_for(const Task& task) const;
  std::size_t shapes() const { return points_.size(); }
  // Whether `task` lies past the recorded sizes (its x over kBeyond times the
  // largest recorded), where the line is a guess.
  bool beyond(const Task& task) const;
  // The largest recorded shape's x, in words ("0.18 ms of roofline time").
  std::string largest() const;

  static constexpr std::size_t kMinShapes = 3;
  static constexpr double kBeyond = 2.0;

private:
  struct Point {
    double flops, bytes, wall_s;
  };
  double x(double flops, double bytes) const;
  double largest_x() const;
  std::vector<Point> points_;
  double peak_flops_ = 0, bytes_per_s_ = 0;  // the last device named with both; 0: unknown
};

}  // namespace tessera::bench
