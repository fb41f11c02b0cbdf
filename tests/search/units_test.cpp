// Unit tests of the search's building blocks: RNG, descriptors, novelty,
// noise-aware acceptance.
#include <gtest/gtest.h>

#include "search/acceptance.hpp"
#include "search/descriptor.hpp"
#include "search/novelty.hpp"
#include "search/rng.hpp"

namespace tessera::search {
namespace {

TEST(Rng, DerivedStreamsAreDeterministicAndDistinct) {
  Rng a = Rng::derive(7, 3, "parent"), b = Rng::derive(7, 3, "parent"), c = Rng::derive(7, 3, "arm"),
      d = Rng::derive(7, 4, "parent");
  const auto x = a.next_u64();
  EXPECT_EQ(x, b.next_u64());
  EXPECT_NE(x, c.next_u64());
  EXPECT_NE(x, d.next_u64());
}

TEST(Rng, BetaSamplesStayInUnitIntervalAndFollowTheMean) {
  Rng r(42);
  double sum = 0;
  for (int i = 0; i < 4000; ++i) {
    const double x = r.beta(8, 2);
    ASSERT_GE(x, 0);
    ASSERT_LE(x, 1);
    sum += x;
  }
  EXPECT_NEAR(sum / 4000, 0.8, 0.02);
  for (int i = 0; i < 100; ++i) EXPECT_LT(r.below(5), 5u);
}

TEST(Descriptor, ReadsTileConfigsLeniently) {
  EXPECT_EQ(tile_size_class({{"block_m", 64}, {"block_n", 64}}), "S");
  EXPECT_EQ(tile_size_class({{"bm", 128}, {"bn", 128}}), "M");
  EXPECT_EQ(tile_size_class({{"block", {128, 256, 64}}}), "L");
  EXPECT_EQ(tile_size_class({{"block_tile", {{"m", 64}, {"n", 128}}}}), "M");
  EXPECT_EQ(tile_size_class({{"BM", "256"}, {"BN", "128"}}), "L");
  EXPECT_EQ(tile_size_class(nlohmann::json::object()), "unknown");
  EXPECT_EQ(tile_size_class(nullptr), "unknown");
  EXPECT_EQ(pipeline_depth({{"stages", 3}}), 3);
  EXPECT_EQ(pipeline_depth({{"num_stages", 9}}), kMaxPipelineBin);
  EXPECT_EQ(pipeline_depth({{"stages", "x"}}), 0);
}

TEST(Descriptor, BottleneckFollowsTheDocumentedThresholds) {
  EXPECT_EQ(bottleneck({{"tensor_pipe_pct", 75.0}, {"dram_throughput_pct", 40.0}}), "tensor");
  EXPECT_EQ(bottleneck({{"tensor_pipe_pct", 65.0}, {"dram_throughput_pct", 88.0}}), "memory");
  EXPECT_EQ(bottleneck({{"tensor_pipe_pct", kBoundThroughputPct - 1}, {"dram_throughput_pct", 20.0}}), "latency");
  EXPECT_EQ(bottleneck({{"sm_throughput_pct", 90.0}}), "latency");
  EXPECT_EQ(bottleneck({{"error", "no cupti"}}), "unknown");
  EXPECT_EQ(occupancy_bucket({{"achieved_occupancy_pct", 5.0}}), "<12.5");
  EXPECT_EQ(occupancy_bucket({{"achieved_occupancy_pct", 30.0}}), "25-50");
  EXPECT_EQ(occupancy_bucket({{"achieved_occupancy_pct", 50.0}}), ">=50");
  EXPECT_EQ(occupancy_bucket(nlohmann::json::object()), "unknown");
}

TEST(Descriptor, DescribeCombinesStructureAndCounters) {
  Candidate c;
  c.meta = {{"tile_config", {{"block_m", 128}, {"block_n", 256}, {"stages", 4}}}};
  EvalResult r;
  r.counters = {{"achieved_occupancy_pct", 20.0}, {"tensor_pipe_pct", 80.0}, {"dram_throughput_pct", 10.0}};
  const Descriptor d = describe(c, r);
  EXPECT_EQ(d.key(), "L|s4|12.5-25|tensor");
  const auto rows = structure_bins();
  const auto cols = behaviour_bins();
  EXPECT_NE(std::find(rows.begin(), rows.end(), d.structure()), rows.end());
  EXPECT_NE(std::find(cols.begin(), cols.end(), d.behaviour()), cols.end());
}

TEST(Novelty, IgnoresCommentsAndWhitespaceOnly) {
  const std::string a = "#include <x>\n__global__ void k(int a){\n  int b = a+1; // add\n}\n";
  const std::string b = "#include <x>\n/* kernel */ __global__   void k( int a ) { int b=a + 1;\n\n}";
  const std::string c = "#include <x>\n__global__ void k(int a){ int b = a+2; }";
  EXPECT_EQ(normalise_source(a), normalise_source(b));
  EXPECT_NE(normalise_source(a), normalise_source(c));
  EXPECT_NE(normalise_source("int x = 1;"), normalise_source("intx = 1;"));
  // Literals are kept verbatim, comment markers inside them included.
  EXPECT_NE(normalise_source("s = \"a  // b\";"), normalise_source("s = \"a\";"));
  // A directive's end of line matters.
  EXPECT_NE(normalise_source("#define A 1\nint x;"), normalise_source("#define A 1 int x;"));
  Candidate ca, cb;
  ca.source = a;
  cb.source = b;
  EXPECT_EQ(novelty_key(ca), novelty_key(cb));
  cb.kind = CandidateKind::translation_unit;
  EXPECT_NE(novelty_key(ca), novelty_key(cb));
  NoveltyIndex idx;
  EXPECT_EQ(idx.check_and_insert("k1", 3), -1);
  EXPECT_EQ(idx.check_and_insert("k1", 5), 3);
  EXPECT_EQ(idx.find("k2"), -1);
}

EvalResult timed(double median, double spread) {
  EvalResult r;
  r.status = Status::ok;
  r.cold.median_us = median;
  r.cold.rel_spread = spread;
  r.cold.p10_us = median * (1 - spread / 2);
  r.cold.p90_us = median * (1 + spread / 2);
  r.best_baseline_us = 100;
  r.speedup = 100 / median;
  return r;
}

TEST(Acceptance, FasterBeyondTheSpreadIsBetterInsideIsBorderline) {
  const AcceptanceRule rule;
  const EvalResult inc = timed(100, 0.04);
  EXPECT_EQ(compare(timed(90, 0.04), inc, rule), Verdict::better);      // 11% > 4%
  EXPECT_EQ(compare(timed(98, 0.04), inc, rule), Verdict::borderline);  // 2% < 4%
  EXPECT_EQ(compare(timed(101, 0.04), inc, rule), Verdict::not_better);
  EXPECT_NEAR(noise_margin(timed(98, 0.02), inc, rule), 0.03, 1e-12);
  // A tight spread still needs the minimum margin.
  EXPECT_EQ(compare(timed(99.8, 0.0), timed(100, 0.0), rule), Verdict::borderline);
  // Without noise awareness any faster median wins.
  EXPECT_EQ(compare(timed(98, 0.04), inc, AcceptanceRule{false}), Verdict::better);
  // Missing timing.
  EvalResult failed;
  failed.status = Status::wrong_answer;
  EXPECT_EQ(compare(failed, inc, rule), Verdict::not_better);
  EXPECT_EQ(compare(inc, failed, rule), Verdict::better);
}

TEST(Acceptance, RemeasurementDecidesBorderlineCases) {
  const AcceptanceRule rule;
  const EvalResult inc = timed(100, 0.04);
  // Both faster, mean gain 2.5% > half the 4% margin: confirmed.
  EXPECT_EQ(compare_remeasured(timed(97, 0.04), timed(98, 0.04), inc, rule), Verdict::better);
  // The second measurement is slower: rejected.
  EXPECT_EQ(compare_remeasured(timed(97, 0.04), timed(100.5, 0.04), inc, rule), Verdict::not_better);
  // Both faster but by too little: rejected.
  EXPECT_EQ(compare_remeasured(timed(99.5, 0.04), timed(99.4, 0.04), inc, rule), Verdict::not_better);
  const EvalResult merged = merge_remeasurement(timed(96, 0.02), timed(98, 0.04));
  EXPECT_DOUBLE_EQ(merged.cold.median_us, 97);
  EXPECT_DOUBLE_EQ(merged.cold.rel_spread, 0.04);
  EXPECT_EQ(merged.cold.samples, 0);
  EXPECT_NEAR(merged.speedup, 0.5 * (100 / 96.0 + 100 / 98.0), 1e-12);
}

}  // namespace
}  // namespace tessera::search
