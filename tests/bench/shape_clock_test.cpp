// The sweep's clock against real sweeps: fitted to the small shapes a sweep
// starts with, how long does it say the large ones take?
#include <gtest/gtest.h>

#include "bench/shape_clock.hpp"

namespace tessera::bench {
namespace {

struct Measured {
  const char* shape;
  double wall_s;
};

// `bench suite --kernels search:24` on one H200 (the device figures its
// records carry): 15 of the 40 smallest layers of llm_shapes_heldout3.json
// (2026-12-03, at most 0.008 TFLOP; most bound by their bytes), and four of
// llm_shapes.json's large layers, as the same sweep timed them (2026-12-02).
constexpr Measured kSmall[] = {
    {"1x896x896", 12.4},      {"1x2048x1536", 9.6},     {"7x1152x896", 8.3},     {"1x1536x8960", 17.3},
    {"33x1536x1536", 11.0},   {"1x22016x4096", 19.5},   {"1x49152x2048", 20.5},  {"1x32000x5120", 24.5},
    {"1x44032x8192", 42.9},   {"1x32768x12288", 37.8},  {"33x6144x2048", 11.3},  {"7x12288x28672", 37.6},
    {"7x44032x8192", 44.5},   {"33x22016x4096", 20.0},  {"33x5376x21504", 26.0},
};
constexpr Measured kLarge[] = {
    {"2048x8192x8192", 72}, {"2048x8192x29568", 196}, {"4096x32000x4096", 206}, {"3001x8192x29568", 281}};

DeviceSummary h200() {
  DeviceSummary d;
  d.name = "NVIDIA H200";
  d.peak_tflops = 693.4;  // the run's measured peak
  d.dram_gbps = 3977.3;
  return d;
}

ShapeClock fitted(const DeviceSummary& device) {
  ShapeClock clock;
  for (const auto& m : kSmall) clock.add(task_from_shape(m.shape), m.wall_s, device);
  return clock;
}

TEST(ShapeClock, FittedByRooflineTimeToSmallShapesItTimesTheLargeOnesWithinAQuarter) {
  const ShapeClock clock = fitted(h200());
  for (const auto& m : kLarge) {
    const auto s = clock.seconds_for(task_from_shape(m.shape));
    ASSERT_TRUE(s.has_value());
    EXPECT_GT(*s / m.wall_s, 0.75) << m.shape << ": " << *s << " s, measured " << m.wall_s;
    EXPECT_LT(*s / m.wall_s, 1.35) << m.shape << ": " << *s << " s, measured " << m.wall_s;
  }
  EXPECT_NE(clock.largest().find("ms of roofline time"), std::string::npos) << clock.largest();
}

// Records without the device's figures leave FLOP as the only size, and the
// line fitted by it to shapes bound by their bytes puts the large ones at
// eight to eleven times what they took (what the sweep said before).
TEST(ShapeClock, WithoutTheDevicesFiguresItFitsByFlopAndOverestimatesTheLargeShapes) {
  const ShapeClock clock = fitted(DeviceSummary{});
  for (const auto& m : kLarge) {
    const auto s = clock.seconds_for(task_from_shape(m.shape));
    ASSERT_TRUE(s.has_value());
    EXPECT_GT(*s / m.wall_s, 5.0) << m.shape << ": " << *s << " s, measured " << m.wall_s;
  }
  EXPECT_NE(clock.largest().find("TFLOP"), std::string::npos) << clock.largest();
}

TEST(ShapeClock, NoEstimateBeforeThreeShapesOrFromOneSize) {
  ShapeClock clock;
  const Task t = task_from_shape("4096x4096x4096");
  clock.add(t, 10, h200());
  clock.add(t, 12, h200());
  EXPECT_FALSE(clock.seconds_for(t).has_value()) << "two shapes";
  clock.add(t, 11, h200());
  EXPECT_FALSE(clock.seconds_for(task_from_shape("8192x8192x8192")).has_value()) << "one size: no slope";
  clock.add(task_from_shape("8192x8192x8192"), 40, h200());
  EXPECT_TRUE(clock.seconds_for(task_from_shape("8192x8192x8192")).has_value());
}

}  // namespace
}  // namespace tessera::bench
