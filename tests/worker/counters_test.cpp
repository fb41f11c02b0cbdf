// bottleneck_hint thresholds and the collect_counters contract. The
// contract test also runs without a GPU: there it must return {"error"}.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "worker/counters.hpp"
#include "worker/handles.hpp"
#include "worker/baselines/kernels.hpp"
#include "tests/testing.hpp"

namespace tessera::worker {
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

TEST(AggregateRanges, CountsAddAndRatesAreDurationWeighted) {
  const std::vector<std::string> m = {"gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                                      "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"};
  // Kernel 1: 300 ns at 90 %, 4 conflicts; kernel 2: 100 ns at 10 %, 6 conflicts.
  const auto r = aggregate_ranges(m, {{300, 90, 4}, {100, 10, 6}}, {300, 100});
  EXPECT_DOUBLE_EQ(r.at(m[0]).get<double>(), 400.0);
  EXPECT_DOUBLE_EQ(r.at(m[1]).get<double>(), (300 * 90 + 100 * 10) / 400.0);  // 70, not the plain mean 50
  EXPECT_DOUBLE_EQ(r.at(m[2]).get<double>(), 10.0);
}

TEST(AggregateRanges, MissingValuesAreSkippedOrNull) {
  const std::vector<std::string> m = {"a.pct", "b.pct"};
  const auto r = aggregate_ranges(m, {{NAN, 20}, {NAN, 40}}, {1, 3});
  EXPECT_TRUE(r.at("a.pct").is_null());
  EXPECT_DOUBLE_EQ(r.at("b.pct").get<double>(), 35.0);
  const auto one = aggregate_ranges(m, {{50, NAN}, {NAN, 40}}, {1, 1});
  EXPECT_DOUBLE_EQ(one.at("a.pct").get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(one.at("b.pct").get<double>(), 40.0);
  EXPECT_THROW(aggregate_ranges(m, {{1, 2}}, {1, 1}), Error);  // one weight per range
}

TEST(SummarizeCounters, TensorPipeIsTheBusierOfHmmaAndGmma) {
  nlohmann::json raw = {{"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", 3.0},
                        {"sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active", 81.0},
                        {"lts__t_sector_hit_rate.pct", nullptr}};
  const auto s = summarize_counters(raw);
  EXPECT_DOUBLE_EQ(s.at("tensor_pipe_pct").get<double>(), 81.0);
  EXPECT_TRUE(s.at("l2_hit_rate_pct").is_null());
  EXPECT_TRUE(s.at("dram_throughput_pct").is_null());
  for (const char* k : {"sm_throughput_pct", "dram_throughput_pct", "memory_throughput_pct", "tensor_pipe_pct",
                        "l2_hit_rate_pct", "achieved_occupancy_pct", "smem_bank_conflicts"})
    EXPECT_TRUE(s.contains(k)) << k;
}

TEST(BottleneckHint, IssueSlotsStandInForSmThroughputInTheFastSet) {
  const nlohmann::json fast = {{"dram_throughput_pct", 10.0}, {"tensor_pipe_pct", 20.0}, {"issue_active_pct", 30.0}};
  EXPECT_EQ(bottleneck_hint(fast), "latency-bound");
  nlohmann::json busy = fast;
  busy["issue_active_pct"] = kLatencyBoundPct + 5;
  EXPECT_EQ(bottleneck_hint(busy), "unknown");
  // sm_throughput_pct, when read, decides.
  busy["sm_throughput_pct"] = kLatencyBoundPct - 5;
  EXPECT_EQ(bottleneck_hint(busy), "latency-bound");
}

TEST(Counters, CounterSetsParseAndTheFastSetDropsOnlyTheBreakdowns) {
  EXPECT_EQ(parse_counter_set("fast"), CounterSet::fast);
  EXPECT_EQ(parse_counter_set("full"), CounterSet::full);
  EXPECT_THROW(parse_counter_set("fastest"), Error);
  const auto full = metrics_for(CounterSet::full), fast = metrics_for(CounterSet::fast);
  EXPECT_EQ(full, default_metrics());
  EXPECT_EQ(fast.size() + 2, full.size());
  for (const auto& m : fast) EXPECT_NE(std::find(full.begin(), full.end(), m), full.end()) << m;
  for (const char* gone : {"sm__throughput.avg.pct_of_peak_sustained_elapsed",
                           "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"})
    EXPECT_EQ(std::find(fast.begin(), fast.end(), gone), fast.end()) << gone;
}

// The reason the fast set exists, checked with CUPTI's host API (no GPU
// needed): each pass re-runs the call and costs ~45 ms of profiler overhead
// on the H100 (docs/counters.md).
TEST(Counters, FastSetNeedsFarFewerProfilerPassesOnGH100) {
  std::size_t full = 0, fast = 0;
  try {
    // Names GH100 lacks (the GMMA pipe metric) are rejected and not counted.
    full = profiler_passes("GH100", metrics_for(CounterSet::full));
    fast = profiler_passes("GH100", metrics_for(CounterSet::fast));
  } catch (const Error& e) {
    GTEST_SKIP() << "CUPTI host API unavailable here: " << e.what();
  }
  std::printf("GH100 profiler passes: full set %zu, fast set %zu\n", full, fast);
  EXPECT_LE(fast, 2u);
  EXPECT_GE(full, 3 * fast);
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

// Several kernels in one call (a translation-unit candidate) are all profiled
// and aggregated: per kernel with the call replayed (default), per kernel with
// CUPTI's kernel replay, and as one user range.
TEST(Counters, MultiKernelCallIsAggregatedInEveryMode) {
  TESSERA_REQUIRE_GPU();
  if (const std::string why = probe_counters(); !why.empty()) GTEST_SKIP() << "counters unavailable here: " << why;
  constexpr std::size_t n = std::size_t{1} << 26;  // 128 MiB: larger than L2, so the writes reach DRAM
  Stream s;
  DeviceBuffer buf(n * sizeof(__half));
  auto three_kernels = [&](cudaStream_t st) {
    for (int i = 0; i < 3; ++i) baselines::fill_random_half(buf.as<__half>(), n, std::uint64_t(i), -1, 1, st);
  };
  auto check_per_kernel = [](const nlohmann::json& r, const char* method) {
    ASSERT_FALSE(r.contains("error")) << r.dump();
    EXPECT_FALSE(r.contains("fallback_reason")) << r.dump();
    EXPECT_EQ(r.at("ranges").get<int>(), 3) << r.dump();
    EXPECT_EQ(r.at("method").get<std::string>(), method);
    ASSERT_TRUE(r.at("raw").at("gpu__time_duration.sum").is_number());
    EXPECT_GT(r.at("raw").at("gpu__time_duration.sum").get<double>(), 0.0);
    ASSERT_TRUE(r.at("dram_throughput_pct").is_number());
    // A fill streams memory: DRAM must be visibly busy while the kernels run.
    EXPECT_GT(r.at("dram_throughput_pct").get<double>(), 10.0) << r.dump();
  };
  const auto call_replay = collect_counters(three_kernels, s.get());
  check_per_kernel(call_replay, "cupti_range_profiler:auto_range+user_replay");

  CounterOptions kernel;
  kernel.mode = CounterMode::per_kernel;
  const auto kernel_replay = collect_counters(three_kernels, s.get(), kernel);
  check_per_kernel(kernel_replay, "cupti_range_profiler:auto_range+kernel_replay");
  // The two replays see the same kernels: their DRAM rates agree roughly.
  if (call_replay.at("dram_throughput_pct").is_number() && kernel_replay.at("dram_throughput_pct").is_number()) {
    EXPECT_NEAR(call_replay.at("dram_throughput_pct").get<double>(),
                kernel_replay.at("dram_throughput_pct").get<double>(), 25.0);
  }

  CounterOptions whole;
  whole.mode = CounterMode::whole_call;
  const auto one_range = collect_counters(three_kernels, s.get(), whole);
  ASSERT_FALSE(one_range.contains("error")) << one_range.dump();
  EXPECT_EQ(one_range.at("ranges").get<int>(), 1);
  EXPECT_GE(one_range.at("passes").get<int>(), 1);
  EXPECT_TRUE(one_range.at("sm_throughput_pct").is_number());
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
}  // namespace tessera::worker
