// The suite's tables: CUDA-L2's column names and meanings, per-bucket means
// and win counts, figures above the peak shown unclamped and listed.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "worker/baselines/baselines.hpp"
#include "bench/table.hpp"
#include "tests/bench/synthetic.hpp"

namespace tessera::bench {
namespace {

TimingStats timed(double us) {
  TimingStats t;
  t.status = "measured";
  t.median_us = us;
  return t;
}

ShapeRecord record(const std::string& shape, const std::string& layout, double kernel, double tn, double nn, double lt_h,
                   double lt_a) {
  ShapeRecord r;
  r.task = task_from_shape(shape, layout);
  r.bucket = bucket_of(r.task, default_buckets());
  r.baselines = {{baselines::kCublasTN, "", timed(tn), ""},
                 {baselines::kCublasNN, "", timed(nn), ""},
                 {baselines::kCublasLtHeuristic, "", timed(lt_h), ""},
                 {baselines::kCublasLtAutotuned, "", timed(lt_a), ""}};
  KernelOutcome k;
  k.name = "k";
  k.result.status = Status::ok;
  k.result.cold = timed(kernel);
  r.kernel = k;
  return r;
}

TEST(BenchTable, SpeedupColumnsFollowCudaL2) {
  const ShapeRow row = shape_row(record("256x256x256", "TN", 8.0, 10.0, 12.0, 9.0, 8.8));
  EXPECT_EQ(row.mnk, "256_256_256");
  EXPECT_DOUBLE_EQ(row.speedup.at("cuBLAS-tn"), 10.0 / 8.0);
  EXPECT_DOUBLE_EQ(row.speedup.at("cuBLAS-nn"), 12.0 / 8.0);
  EXPECT_DOUBLE_EQ(row.speedup.at("cuBLAS-max"), 10.0 / 8.0);  // over the faster of the two
  EXPECT_DOUBLE_EQ(row.speedup.at("cuBLASLt-heuristic-tn"), 9.0 / 8.0);
  EXPECT_EQ(row.speedup.count("cuBLASLt-heuristic-nn"), 0u);  // cuBLASLt runs in the task's layout only
  EXPECT_DOUBLE_EQ(row.speedup.at("cuBLASLt-heuristic-max"), 9.0 / 8.0);
  EXPECT_DOUBLE_EQ(row.speedup.at("cuBLASLt-auto-tuning-max"), 8.8 / 8.0);
  EXPECT_DOUBLE_EQ(row.speedup.at("baseline-max"), 8.8 / 8.0);
  EXPECT_EQ(row.best_baseline, "cublaslt_autotuned");

  const ShapeRow nn = shape_row(record("256x256x256", "NN", 8.0, 10.0, 12.0, 9.0, 8.8));
  EXPECT_EQ(nn.speedup.count("cuBLASLt-auto-tuning-tn"), 0u);
  EXPECT_DOUBLE_EQ(nn.speedup.at("cuBLASLt-auto-tuning-nn"), 8.8 / 8.0);
}

TEST(BenchTable, FailedBaselinesAndKernelsGiveNoRatio) {
  ShapeRecord r = record("64x64x64", "TN", 8.0, 10.0, 12.0, 9.0, 8.8);
  r.baselines[0].error = "output check failed: x";
  ShapeRow row = shape_row(r);
  EXPECT_DOUBLE_EQ(row.speedup.at("cuBLAS-max"), 12.0 / 8.0);
  r.kernel->result.status = Status::wrong_answer;
  row = shape_row(r);
  EXPECT_FALSE(row.kernel_us);
  EXPECT_TRUE(row.speedup.empty());
  EXPECT_EQ(row.status, "wrong_answer");
}

TEST(BenchTable, StatsAreGeometricAndArithmeticWithWins) {
  const Stat s = stat_of({2.0, 0.5, 1.0, 4.0});
  EXPECT_EQ(s.n, 4);
  EXPECT_NEAR(s.geomean, std::pow(4.0, 0.25), 1e-12);
  EXPECT_DOUBLE_EQ(s.mean, 7.5 / 4);
  EXPECT_EQ(s.wins, 2);
  EXPECT_EQ(s.losses, 1);
  EXPECT_DOUBLE_EQ(s.min, 0.5);
  EXPECT_DOUBLE_EQ(s.max, 4.0);
  EXPECT_EQ(stat_of({}).n, 0);
}

TEST(BenchTable, SummariesPerBucketAndOverall) {
  const bench::Run run = testing::complete_run("table-summary", {64, 1024, 4096});
  const auto rows = shape_rows(run.records);
  const auto sums = summarize(run, rows);
  ASSERT_EQ(sums.size(), 4u);  // small, medium, large, all
  EXPECT_EQ(sums.back().bucket, kAllBuckets);
  int shapes = 0, done = 0, ok = 0;
  for (std::size_t i = 0; i + 1 < sums.size(); ++i) {
    shapes += sums[i].shapes;
    done += sums[i].done;
    ok += sums[i].kernel_ok;
    EXPECT_EQ(sums[i].speedup.at("baseline-max").n, sums[i].kernel_ok);
  }
  EXPECT_EQ(shapes, 27);
  EXPECT_EQ(sums.back().shapes, 27);
  EXPECT_EQ(sums.back().done, done);
  EXPECT_EQ(sums.back().kernel_ok, ok);
  EXPECT_EQ(sums.back().kernel_failed, 0);
}

TEST(BenchTable, CsvLinesUpWithCudaL2AndShowsPeakUnclamped) {
  ShapeRecord r = record("4096x4096x4096", "TN", 180.0, 200.0, 210.0, 205.0, 190.0);  // 763.6 TFLOP/s kernel
  Ceiling c{721.0, "worker start", 4800, "stored"};
  const std::string csv = shapes_csv({shape_row(r)}, c);
  std::istringstream in(csv);
  std::string header, line;
  std::getline(in, header);
  std::getline(in, line);
  EXPECT_EQ(header.rfind("mnk,", 0), 0u);
  for (const char* col : {"cuBLAS-tn", "cuBLAS-nn", "cuBLAS-max", "cuBLASLt-heuristic-tn", "cuBLASLt-heuristic-nn",
                          "cuBLASLt-heuristic-max", "cuBLASLt-auto-tuning-tn", "cuBLASLt-auto-tuning-nn",
                          "cuBLASLt-auto-tuning-max"})
    EXPECT_NE(header.find(std::string(",") + col + ","), std::string::npos) << col;
  EXPECT_EQ(line.rfind("4096_4096_4096,", 0), 0u);
  EXPECT_NE(line.find(",105.9,"), std::string::npos) << "105.9% of the stored peak, not clamped: " << line;
  const auto above = above_peak({r}, c);
  ASSERT_EQ(above.size(), 2u);  // the kernel and cuBLASLt autotuned (723 TFLOP/s)
  EXPECT_EQ(above[0].who, "kernel k");
  EXPECT_EQ(above[1].who, "cublaslt_autotuned");
}

TEST(BenchTable, TileTunedShapesCarryTheCostModelsRankAndPrediction) {
  ShapeRecord tuned = record("192x4096x7168", "TN", 32.35, 35.0, 33.0, 30.0, 27.26);
  tuned.kernel->tune = {{"plan", "model + explore + refine"},
                        {"model",
                         {{"first_pick", "a"}, {"first_pick_predicted_us", 23.05}, {"first_pick_measured_us", 34.1},
                          {"winner_rank", 7}, {"winner_predicted_us", 26.5}, {"winner_measured_us", 32.3},
                          {"from_model", 8}}}};
  const ShapeRecord file = record("64x64x64", "TN", 3.0, 3.1, 3.2, 3.3, 3.4);  // a kernel file: no model
  const std::string csv = shapes_csv({shape_row(tuned), shape_row(file)}, Ceiling{});
  std::istringstream in(csv);
  std::string header, a, b;
  std::getline(in, header);
  std::getline(in, a);
  std::getline(in, b);
  EXPECT_NE(header.find(",model_winner_rank,model_winner_predicted_us,model_first_pick_predicted_us,"
                        "model_first_pick_measured_us,note"),
            std::string::npos)
      << header;
  EXPECT_NE(a.find(",7,26.500,23.050,34.100,"), std::string::npos) << a;
  EXPECT_NE(b.find(",,,,,"), std::string::npos) << "no model, empty cells: " << b;
  EXPECT_EQ(shape_row(tuned).model.value("winner_rank", 0), 7);
  EXPECT_TRUE(shape_row(file).model.is_null());
}

TEST(BenchTable, CeilingTakesTheStoredFiguresOrTheOverrides) {
  testing::SyntheticOptions o;
  o.sizes = {64};
  const auto c = testing::synthetic_config(o);
  const std::vector<ShapeRecord> records = {testing::synthetic_record(c.tasks[0], c.buckets, o)};
  const Ceiling stored = resolve_ceiling(records);
  EXPECT_EQ(stored.peak_tflops, 900);
  EXPECT_EQ(stored.dram_gbps, 4800);
  const Ceiling given = resolve_ceiling(records, 990, 3350);
  EXPECT_EQ(given.peak_tflops, 990);
  EXPECT_EQ(given.dram_gbps, 3350);
  EXPECT_NE(given.peak_source.find("--peak-tflops"), std::string::npos);
  EXPECT_FALSE(resolve_ceiling({}).has_peak());
}

// A stored probe that read low (the H200's cold clocks) must not put cuBLAS
// itself above 100%: the sweep's fastest baseline raises the peak, kernels
// above that are still listed, and without a stored peak nothing is invented.
TEST(BenchTable, CeilingRisesToTheSweepsFastestBaseline) {
  ShapeRecord r = record("4096x4096x4096", "TN", 170.0, 200.0, 210.0, 205.0, 190.0);  // kernel 808, autotuned 723
  r.device.peak_tflops = 684;
  r.device.peak_source = "probe";
  const Ceiling c = resolve_ceiling({r});
  EXPECT_NEAR(c.peak_tflops, 723.3, 0.1);
  EXPECT_NE(c.peak_source.find("cublaslt_autotuned at 4096x4096x4096"), std::string::npos) << c.peak_source;
  EXPECT_NE(c.peak_source.find("above the stored peak of 684"), std::string::npos) << c.peak_source;
  const auto above = above_peak({r}, c);
  ASSERT_EQ(above.size(), 1u);
  EXPECT_EQ(above[0].who, "kernel k");
  EXPECT_EQ(resolve_ceiling({r}, 700).peak_tflops, 700);  // an override still wins
  r.device.peak_tflops = 0;
  EXPECT_FALSE(resolve_ceiling({r}).has_peak());
}

}  // namespace
}  // namespace tessera::bench
