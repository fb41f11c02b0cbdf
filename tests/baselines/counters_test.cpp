// bottleneck_hint thresholds and the collect_counters contract. The
// contract test also runs without a GPU: there it must return {"error"}.
#include <gtest/gtest.h>

#include <algorithm>

#include "harness/core/error.hpp"
#include "harness/gpu/counters.hpp"
#include "harness/gpu/handles.hpp"
#include "baselines/kernels.hpp"
#include "tests/testing.hpp"

namespace tessera::gpu {
namespace {

nlohmann::json counters(double sm, double dram, double tensor) {
  return {{"sm_throughput_pct", sm}, {"dram_throughput_pct", dram}, {"tensor_pipe_pct", tensor}};
}

TEST(BottleneckHint, TensorPipeAtThreshold) {
  EXPECT_EQ(bottleneck_hint(counters(80, 20, kTensorBoundPct)), "tensor-pipe-bound");
  EXPECT_NE(bottleneck_hint(counters(80, 20, kTensorBoundPct - 0.1)), "tensor-pipe-bound");
}

TEST(BottleneckHint, MemoryAtThreshold) {
  EXPECT_EQ(bottleneck_hint(counters(50, kMemoryBoundPct, 10)), "memory-bound");
  EXPECT_NE(bottleneck_hint(counters(50, kMemoryBoundPct - 0.1, 10)), "memory-bound");
}

TEST(BottleneckHint, BothHighPicksTheBusier) {
  EXPECT_EQ(bottleneck_hint(counters(90, 70, 85)), "tensor-pipe-bound");
  EXPECT_EQ(bottleneck_hint(counters(90, 92, 85)), "memory-bound");
}

TEST(BottleneckHint, NothingBusyIsLatencyBound) {
  EXPECT_EQ(bottleneck_hint(counters(kLatencyBoundPct - 1, kLatencyBoundPct - 1, 5)), "latency-bound");
  // SM busy but not on the tensor pipe, memory idle: no confident reading.
  EXPECT_EQ(bottleneck_hint(counters(kLatencyBoundPct + 1, 10, 5)), "unknown");
}

TEST(BottleneckHint, FallsBackToMemoryThroughputWithoutDram) {
  nlohmann::json c = {{"sm_throughput_pct", 50}, {"dram_throughput_pct", nullptr}, {"memory_throughput_pct", 75},
                      {"tensor_pipe_pct", 10}};
  EXPECT_EQ(bottleneck_hint(c), "memory-bound");
}

TEST(BottleneckHint, ErrorsAndMissingValuesAreUnknown) {
  EXPECT_EQ(bottleneck_hint({{"error", "no GPU"}}), "unknown");
  EXPECT_EQ(bottleneck_hint(nlohmann::json::object()), "unknown");
  EXPECT_EQ(bottleneck_hint(nlohmann::json()), "unknown");
  EXPECT_EQ(bottleneck_hint({{"sm_throughput_pct", nullptr}, {"dram_throughput_pct", nullptr}}), "unknown");
}

TEST(Counters, DefaultMetricsCoverTheSummary) {
  const auto m = default_metrics();
  for (const char* want : {"sm__throughput.avg.pct_of_peak_sustained_elapsed",
                           "dram__throughput.avg.pct_of_peak_sustained_elapsed", "lts__t_sector_hit_rate.pct",
                           "sm__warps_active.avg.pct_of_peak_sustained_active",
                           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"})
    EXPECT_NE(std::find(m.begin(), m.end(), want), m.end()) << want;
}

// Without a GPU this is the "error is data" path; with one, the documented keys.
TEST(Counters, CollectReturnsDocumentedKeysOrAnError) {
  const bool gpu = testing::gpu_unavailable_reason().empty();
  nlohmann::json r;
  if (!gpu) {
    EXPECT_NO_THROW(r = collect_counters([](cudaStream_t) {}, nullptr));
    ASSERT_TRUE(r.contains("error"));
    EXPECT_FALSE(r.at("error").get<std::string>().empty());
    EXPECT_FALSE(probe_counters().empty());
    return;
  }
  constexpr std::size_t n = std::size_t{1} << 22;
  Stream s;
  DeviceBuffer buf(n * sizeof(__half));
  EXPECT_NO_THROW(r = collect_counters(
                      [&](cudaStream_t st) { baselines::fill_random_half(buf.as<__half>(), n, 3, -1, 1, st); }, s.get()));
  if (r.contains("error")) {
    GTEST_SKIP() << "counters unavailable here: " << r.at("error").get<std::string>();
  }
  for (const char* k : {"sm_throughput_pct", "dram_throughput_pct", "tensor_pipe_pct", "l2_hit_rate_pct",
                        "achieved_occupancy_pct", "smem_bank_conflicts", "raw", "raw_errors", "passes"})
    EXPECT_TRUE(r.contains(k)) << k;
  ASSERT_TRUE(r.at("sm_throughput_pct").is_number());
  EXPECT_GT(r.at("sm_throughput_pct").get<double>(), 0.0);
  EXPECT_LE(r.at("sm_throughput_pct").get<double>(), 100.5);
  EXPECT_GE(r.at("passes").get<int>(), 1);
  EXPECT_TRUE(probe_counters().empty()) << probe_counters();
}

TEST(Counters, UnknownMetricIsReportedNotFatal) {
  TESSERA_REQUIRE_GPU();
  constexpr std::size_t n = std::size_t{1} << 20;
  Stream s;
  DeviceBuffer buf(n * sizeof(__half));
  CounterOptions opt;
  opt.metrics = {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "no__such_metric.sum"};
  const auto r = collect_counters(
      [&](cudaStream_t st) { baselines::fill_random_half(buf.as<__half>(), n, 3, -1, 1, st); }, s.get(), opt);
  if (r.contains("error")) GTEST_SKIP() << "counters unavailable here: " << r.at("error").get<std::string>();
  EXPECT_TRUE(r.at("raw_errors").contains("no__such_metric.sum"));
  EXPECT_TRUE(r.at("raw").at("sm__throughput.avg.pct_of_peak_sustained_elapsed").is_number());
}

// A launch that throws (a failing candidate) must come back as an error and
// leave the profiler usable for the next call.
TEST(Counters, ThrowingLaunchIsAnErrorAndRecoverable) {
  TESSERA_REQUIRE_GPU();
  if (const std::string why = probe_counters(); !why.empty()) GTEST_SKIP() << "counters unavailable here: " << why;
  Stream s;
  nlohmann::json bad;
  EXPECT_NO_THROW(bad = collect_counters([](cudaStream_t) { throw tessera::Error("launch failed on purpose"); }, s.get()));
  ASSERT_TRUE(bad.contains("error"));
  EXPECT_NE(bad.at("error").get<std::string>().find("on purpose"), std::string::npos) << bad.dump();
  constexpr std::size_t n = std::size_t{1} << 20;
  DeviceBuffer buf(n * sizeof(__half));
  const auto good = collect_counters(
      [&](cudaStream_t st) { baselines::fill_random_half(buf.as<__half>(), n, 3, -1, 1, st); }, s.get());
  EXPECT_FALSE(good.contains("error")) << good.dump();
}

}  // namespace
}  // namespace tessera::gpu
