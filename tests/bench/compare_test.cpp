// Another tool's per-shape table, joined with ours shape by shape, with the
// statement that the two were measured differently.
#include <gtest/gtest.h>

#include "bench/compare.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "tests/bench/synthetic.hpp"

namespace tessera::bench {
namespace {

std::filesystem::path write_csv(const std::string& name, const std::string& text) {
  const auto dir = testing::fresh_dir("compare-" + name);
  std::filesystem::create_directories(dir);
  atomic_write_file(dir / "other.csv", text);
  return dir / "other.csv";
}

TEST(BenchCompare, ReadsATableKeyedByMnk) {
  const auto t = load_other_table(write_csv("read", "mnk,torch.matmul,cuBLAS-max\n64_64_64,1.5,1.4\n\"64_64_128\",1.2,\n"),
                                  "Other");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"torch.matmul", "cuBLAS-max"}));
  EXPECT_DOUBLE_EQ(t.values.at("64_64_64").at("cuBLAS-max"), 1.4);
  EXPECT_EQ(t.values.at("64_64_128").count("cuBLAS-max"), 0u);  // empty field: no value
}

TEST(BenchCompare, MalformedTablesAreBadInput) {
  EXPECT_THROW(load_other_table("/nonexistent.csv", "x"), Error);
  EXPECT_THROW(load_other_table(write_csv("nokey", "shape,cuBLAS-max\n64_64_64,1.0\n"), "x"), Error);
  EXPECT_THROW(load_other_table(write_csv("badnum", "mnk,cuBLAS-max\n64_64_64,fast\n"), "x"), Error);
  EXPECT_THROW(load_other_table(write_csv("badkey", "mnk,cuBLAS-max\n64x64x64,1.0\n"), "x"), Error);
  EXPECT_THROW(load_other_table(write_csv("twice", "mnk,cuBLAS-max\n64_64_64,1.0\n64_64_64,1.1\n"), "x"), Error);
  EXPECT_THROW(load_other_table(write_csv("fields", "mnk,cuBLAS-max\n64_64_64,1.0,2.0\n"), "x"), Error);
}

TEST(BenchCompare, JoinsShapeByShapePerBucketAndSaysHowEachMeasured) {
  const bench::Run run = testing::complete_run("compare-join", {64, 128, 4096});
  const auto rows = shape_rows(run.records);
  // The other tool reports 1.25x over cuBLASLt autotuned everywhere, on two shapes we have and one we do not.
  const auto other = load_other_table(
      write_csv("join", "mnk,cuBLASLt-auto-tuning-max,cuBLAS-max\n64_64_64,1.25,1.3\n4096_4096_4096,1.25,1.3\n"
                        "8192_8192_8192,1.25,1.3\n"),
      "CUDA-L2");
  const Comparison c = compare_runs(run, rows, other, kCudaL2Method);
  EXPECT_EQ(c.columns, (std::vector<std::string>{"cuBLAS-max", "cuBLASLt-auto-tuning-max"}));
  ASSERT_EQ(c.rows.size(), 2u);
  const auto& all = c.buckets.back();
  EXPECT_EQ(all.bucket, "all");
  EXPECT_EQ(all.ours.at("cuBLASLt-auto-tuning-max").n, 2);
  EXPECT_DOUBLE_EQ(all.theirs.at("cuBLASLt-auto-tuning-max").geomean, 1.25);
  EXPECT_EQ(c.buckets.front().bucket, "small");
  EXPECT_EQ(c.buckets.front().ours.at("cuBLAS-max").n, 1);
  const std::string text = caveat(c);
  EXPECT_NE(text.find("CUDA-L2 measured differently"), std::string::npos) << text;
  EXPECT_NE(text.find("no L2 flush"), std::string::npos) << text;
  EXPECT_NE(text.find("L2 flushed before every sample"), std::string::npos) << text;
  EXPECT_NE(comparison_markdown(c).find(text), std::string::npos);
  EXPECT_EQ(comparison_csv(c).substr(0, comparison_csv(c).find('\n')),
            "mnk,bucket,tessera cuBLAS-max,CUDA-L2 cuBLAS-max,tessera cuBLASLt-auto-tuning-max,CUDA-L2 "
            "cuBLASLt-auto-tuning-max");
}

TEST(BenchCompare, NeedsTimedKernelsAndACommonColumn) {
  testing::SyntheticOptions o;
  o.sizes = {64};
  o.kernels = false;
  const bench::Run baselines_only = testing::write_synthetic_run(testing::fresh_dir("compare-none"), o);
  const auto other = load_other_table(write_csv("none", "mnk,cuBLAS-max\n64_64_64,1.3\n"), "x");
  EXPECT_THROW(compare_runs(baselines_only, shape_rows(baselines_only.records), other, "m"), Error);
  o.kernels = true;
  const bench::Run run = testing::write_synthetic_run(testing::fresh_dir("compare-cols"), o);
  const auto unrelated = load_other_table(write_csv("cols", "mnk,torch.matmul\n64_64_64,1.3\n"), "x");
  EXPECT_THROW(compare_runs(run, shape_rows(run.records), unrelated, "m"), Error);
}

}  // namespace
}  // namespace tessera::bench
