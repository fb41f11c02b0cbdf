// `tessera tile model eval --plot FILE.svg`: each judged model's shapes from
// its worst to its best, rho above and the first pick below, in one SVG.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "bench/model_data.hpp"
#include "bench/model_eval.hpp"
#include "bench/model_eval_chart.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "tests/bench/synthetic.hpp"
#include "tests/testing.hpp"
#include "tile/learned_model.hpp"

namespace tessera::bench {
namespace {

ModelJudgement judged(const std::vector<std::pair<double, double>>& rho_and_ratio) {
  ModelJudgement j;
  for (const auto& [rho, ratio] : rho_and_ratio) {
    ShapeJudgement s;
    s.task_id = fmt::format("shape{}", j.shapes.size());
    s.spearman = rho;
    s.first_pick_ratio = ratio;
    j.shapes.push_back(s);
  }
  return j;
}

// The points of the n-th polyline, as the SVG holds them (pixels: y grows downwards).
std::vector<std::pair<double, double>> polyline(const std::string& svg, int n) {
  std::size_t at = 0;
  for (int i = 0; i <= n; ++i) {
    at = svg.find("<polyline", at + 1);
    if (at == std::string::npos) return {};
  }
  const std::size_t begin = svg.find("points=\"", at) + 8, end = svg.find('"', begin);
  std::vector<std::pair<double, double>> out;
  std::size_t p = begin;
  while (p < end) {
    const std::size_t comma = svg.find(',', p), space = svg.find(' ', comma);
    out.emplace_back(std::stod(svg.substr(p, comma - p)), std::stod(svg.substr(comma + 1, space - comma - 1)));
    p = space + 1;
  }
  return out;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(ModelEvalChart, EachModelsShapesRunFromItsWorstToItsBest) {
  const ModelJudgement a = judged({{0.95, 1.00}, {0.40, 1.10}, {0.80, 1.01}});
  const ModelJudgement b = judged({{0.90, 1.05}, {0.99, 1.00}});
  const ModelJudgement none;
  const std::string svg = model_eval_chart({{"analytical", &a}, {"empty", &none}, {"learned", &b}});
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_EQ(count(svg, "<svg "), 3) << "one document holding two panels";
  EXPECT_EQ(count(svg, "<polyline"), 4) << "a line per model that judged a shape, in each panel";
  EXPECT_EQ(svg.find(">empty<"), std::string::npos) << "a model that judged no shape is left out";
  EXPECT_EQ(count(svg, ">analytical<"), 2);
  // Rho above, rising from the worst shape: y in pixels falls (or holds, on a step).
  for (int line : {0, 1}) {
    const auto pts = polyline(svg, line);
    ASSERT_GE(pts.size(), 3u);
    for (std::size_t i = 1; i < pts.size(); ++i) {
      EXPECT_GE(pts[i].first, pts[i - 1].first);
      EXPECT_LE(pts[i].second, pts[i - 1].second + 1e-9) << "line " << line << " point " << i;
    }
  }
  // The first pick below, from the farthest over the best: a falling line, y in pixels rises.
  for (int line : {2, 3}) {
    const auto pts = polyline(svg, line);
    ASSERT_GE(pts.size(), 3u);
    for (std::size_t i = 1; i < pts.size(); ++i) EXPECT_GE(pts[i].second, pts[i - 1].second - 1e-9);
  }
  // 3 shapes: a step per shape after the first, and the last held to 100%.
  EXPECT_EQ(polyline(svg, 0).size(), 2u * 4 - 1);
}

TEST(ModelEvalChart, NothingJudgedIsAnError) {
  const ModelJudgement none;
  try {
    model_eval_chart({{"analytical", &none}});
    ADD_FAILURE() << "a plot of no shape";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::bad_input);
  }
}

// End to end: the cross-validation draws its three models; a file name that is
// not .svg is refused before any work, and nothing is written.
TEST(ModelEvalChart, TheCommandWritesThePlot) {
  if (!tile::LearnedModel::available()) GTEST_SKIP() << "built without XGBoost (install libxgboost-dev): no learned model";
  const std::vector<tile::Measurement> rows = testing::learnable_rows();
  const auto dir = testing::fresh_dir("model_eval_chart_cli");
  write_rows(dir / "rows.jsonl", rows);
  const auto plot = dir / "eval.svg";
  const auto r = tessera::testing::run_command(fmt::format("{} tile model eval {} --folds 2 --no-progress --plot {} 2>&1",
                                                           TESSERA_BINARY, (dir / "rows.jsonl").string(), plot.string()));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plotted rho and the first pick"), std::string::npos) << r.out;
  const std::string svg = read_file(plot);
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_EQ(count(svg, ">learned<"), 2) << svg.substr(0, 400);
  const auto refused = tessera::testing::run_command(fmt::format(
      "{} tile model eval {} --folds 2 --plot {} 2>&1", TESSERA_BINARY, (dir / "rows.jsonl").string(),
      (dir / "plot.png").string()));
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.out.find("ends in .svg"), std::string::npos) << refused.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "plot.png"));
}

}  // namespace
}  // namespace tessera::bench
