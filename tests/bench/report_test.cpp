// The report from synthetic runs: one self-contained page with a heat map per
// K, the scatter plots, the tables, the peak statement and the comparison.
#include <gtest/gtest.h>

#include <regex>

#include <fmt/format.h>

#include "bench/report.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "tests/bench/synthetic.hpp"

namespace tessera::bench {
namespace {

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + needle.size())) ++n;
  return n;
}

std::size_t rows_of_table(const std::string& html, const std::string& id) {
  const auto start = html.find("<table id=\"" + id + "\">");
  if (start == std::string::npos) return 0;
  return count(html.substr(start, html.find("</table>", start) - start), "<tr>");
}

TEST(BenchReport, GridRunDrawsEveryPart) {
  const bench::Run run = testing::write_synthetic_run(testing::fresh_dir("report-grid"));
  const auto files = write_report(run, {});
  const std::string html = read_file(files.html);
  int timed = 0;
  for (const auto& r : shape_rows(run.records)) timed += r.kernel_us.has_value();
  EXPECT_EQ(count(html, "<svg class=\"heatmap\""), 10u);  // one per K
  EXPECT_EQ(count(html, "<rect class=\"cell\""), std::size_t(timed));
  EXPECT_EQ(count(html, "<svg class=\"legend\""), 1u);
  EXPECT_EQ(count(html, "<svg class=\"scatter\""), 1u);
  EXPECT_EQ(count(html, "<svg class=\"scatter roofline\""), 1u);
  EXPECT_EQ(count(html, "<circle class=\"pt\""), std::size_t(timed) * 2 + std::size_t(run.records.size()));
  EXPECT_EQ(rows_of_table(html, "buckets"), 2u + 4u);  // two header rows, small, medium, large, all
  EXPECT_EQ(rows_of_table(html, "worst"), 1u + std::size_t(kExtremeShapes));
  EXPECT_EQ(rows_of_table(html, "best"), 1u + std::size_t(kExtremeShapes));
  EXPECT_NE(html.find("Peak 900 TFLOP/s"), std::string::npos);
  EXPECT_NE(html.find("DRAM 4800 GB/s"), std::string::npos);
  // Self-contained: nothing is fetched.
  for (const char* fetch : {"<link", "<script src", "src=\"http", "href=\"http", "@import", "url(http"})
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
  const std::string md = read_file(files.markdown);
  EXPECT_NE(md.find("## By size bucket"), std::string::npos);
  EXPECT_NE(md.find("| all |"), std::string::npos);
  EXPECT_NE(md.find("cost model: winner's rank, predicted µs"), std::string::npos) << "a column of kernel reports";
  EXPECT_TRUE(std::filesystem::exists(run.dir / "shapes.csv"));
}

TEST(BenchReport, FiguresAboveThePeakAreSaidNotClamped) {
  const bench::Run run = testing::write_synthetic_run(testing::fresh_dir("report-peak"));
  ReportOptions o;
  o.peak_tflops = 300;  // lower than what the synthetic large shapes reach
  const ReportData d = report_data(run, o);
  ASSERT_FALSE(d.above.empty());
  const std::string html = report_html(d, o);
  EXPECT_NE(html.find("ABOVE this peak"), std::string::npos);
  EXPECT_NE(html.find("not clamped"), std::string::npos);
  // The table shows the figure as measured: some "% of peak" above 100.
  EXPECT_TRUE(std::regex_search(html, std::regex(R"(<td class="num">(1\d\d|[2-9]\d\d)\.\d%</td>)")));
}

TEST(BenchReport, BaselinesOnlyRunShowsThroughput) {
  testing::SyntheticOptions o;
  o.kernels = false;
  o.sizes = {64, 256, 1024, 4096};
  const bench::Run run = testing::write_synthetic_run(testing::fresh_dir("report-baselines"), o);
  const std::string html = report_html(report_data(run, {}), {});
  EXPECT_EQ(count(html, "<svg class=\"heatmap\""), 4u);
  EXPECT_NE(html.find("TFLOP/s of the fastest baseline"), std::string::npos);
  EXPECT_EQ(count(html, "<svg class=\"scatter\""), 0u);  // no speedups to plot
  EXPECT_EQ(count(html, "<svg class=\"scatter roofline\""), 1u);
  EXPECT_NE(html.find("fastest baseline most often"), std::string::npos);
}

TEST(BenchReport, ShapesSpreadOverGpusNameTheirGpu) {
  testing::SyntheticOptions o;
  o.sizes = {64, 256, 1024};
  const RunConfig c = testing::synthetic_config(o);
  const auto dir = testing::fresh_dir("report-gpus");
  {
    RunWriter w(dir, c);
    for (std::size_t i = 0; i < c.tasks.size(); ++i) {
      ShapeRecord r = testing::synthetic_record(c.tasks[i], c.buckets, o);
      r.gpu = int(i % 2);  // as bench suite --gpus 0,1 merges them
      w.append(r);
    }
  }
  const bench::Run run = load_run(dir);
  const auto files = write_report(run, {});
  const std::string md = read_file(files.markdown);
  double seconds[2] = {0, 0};
  for (const auto& r : run.records) seconds[r.gpu] += r.wall_s;
  EXPECT_NE(md.find(fmt::format("shapes per GPU (time measuring): 0 Synthetic H200: 14 ({:.0f} s), 1 Synthetic H200: "
                                "13 ({:.0f} s)", seconds[0], seconds[1])),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| GPU |"), std::string::npos) << "the worst and best shapes name their GPU:\n" << md;
  EXPECT_NE(read_file(files.html).find("<th>GPU</th>"), std::string::npos);

  const bench::Run one = testing::write_synthetic_run(testing::fresh_dir("report-one-gpu"), o);
  const std::string md_one = read_file(write_report(one, {}).markdown);
  EXPECT_EQ(md_one.find("shapes per GPU"), std::string::npos) << "one GPU: nothing to tell apart";
  EXPECT_EQ(md_one.find("| GPU |"), std::string::npos);
}

TEST(BenchReport, ScatteredShapesSkipTheHeatMapsAndSaySo) {
  // 17 values of K (none of them the synthetic shape whose kernel fails): more heat maps than a page should hold.
  testing::SyntheticOptions o;
  RunConfig c = testing::synthetic_config(o);
  c.tasks.clear();
  for (int i = 0; i <= kMaxHeatmaps; ++i) c.tasks.push_back(task_from_shape(fmt::format("64x64x{}", 80 + 32 * i)));
  const auto dir = testing::fresh_dir("report-scattered");
  {
    RunWriter w(dir, c);
    for (const auto& t : c.tasks) w.append(testing::synthetic_record(t, c.buckets, o));
  }
  const bench::Run run = load_run(dir);
  const std::string html = report_html(report_data(run, {}), {});
  EXPECT_EQ(count(html, "<svg class=\"heatmap\""), 0u);
  EXPECT_NE(html.find("do not form a grid"), std::string::npos);
}

TEST(BenchReport, ComparisonIsDrawnWithItsCaveat) {
  const bench::Run run = testing::write_synthetic_run(testing::fresh_dir("report-compare"));
  std::string csv = "mnk,cuBLASLt-auto-tuning-max,cuBLAS-max\n";
  for (const auto& t : run.config.tasks) csv += fmt::format("{}_{}_{},1.1,1.2\n", t.m, t.n, t.k);
  atomic_write_file(run.dir / "other.csv", csv);
  ReportOptions o;
  o.against = run.dir / "other.csv";
  const auto files = write_report(run, o);
  const std::string html = read_file(files.html);
  EXPECT_NE(html.find("Compared with CUDA-L2"), std::string::npos);
  EXPECT_NE(html.find("CUDA-L2 measured differently"), std::string::npos);
  EXPECT_EQ(count(html, "<svg class=\"scatter compare\""), 1u);
  EXPECT_EQ(rows_of_table(html, "compare"), 1u + 4u * 2u);  // 4 buckets x 2 common columns
  EXPECT_TRUE(std::filesystem::exists(run.dir / "compare.csv"));
  EXPECT_NE(read_file(files.markdown).find("## Compared with CUDA-L2"), std::string::npos);
}

TEST(BenchReport, EmptyRunIsBadInput) {
  testing::SyntheticOptions o;
  o.sizes = {64};
  o.skip_every = 1;  // nothing recorded
  const bench::Run run = testing::write_synthetic_run(testing::fresh_dir("report-empty"), o);
  EXPECT_THROW(report_data(run, {}), Error);
}

}  // namespace
}  // namespace tessera::bench
