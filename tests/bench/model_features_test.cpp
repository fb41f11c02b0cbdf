// `tessera tile model features`: the training rows with what the model sees
// and predicts, a CSV line each. The columns are the features the trees are
// given (in feature_names()'s order), the times are the rows' and the models'
// own, and a file name that is not .csv or a model that does not exist is a
// clear error that writes nothing.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/model_data.hpp"
#include "core/task.hpp"
#include "tests/bench/synthetic.hpp"
#include "tests/testing.hpp"
#include "tile/cost_model.hpp"
#include "tile/features.hpp"
#include "tile/learned_model.hpp"

namespace tessera::bench {
namespace {

// Two shapes of two families, 8 configs each, timed at the analytical
// prediction times a factor that depends on the config, so a model trained on
// them has something to learn.
std::vector<tile::Measurement> rows() {
  std::vector<tile::Measurement> out;
  for (const char* shape : {"128x4096x4096", "33x3584x3584"}) {
    const Task task = task_from_shape(shape);
    const tile::Limits limits{};
    const auto ranked = tile::rank_configs(task, limits, 8);
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      tile::Measurement m;
      m.task = task;
      m.config = ranked[i].config;
      m.limits = limits;
      m.device_kind = "h200";
      m.cold_us = ranked[i].prediction.time_us * (ranked[i].config.persistent ? 0.8 : 1.1 + 0.05 * double(i));
      out.push_back(m);
    }
  }
  return out;
}

std::vector<std::vector<std::string>> read_csv(const std::filesystem::path& file) {
  std::vector<std::vector<std::string>> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream s(line);
    for (std::string cell; std::getline(s, cell, ',');) cells.push_back(cell);
    lines.push_back(cells);
  }
  return lines;
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(b)); }

tessera::testing::CommandResult cli(const std::filesystem::path& dir, const std::string& args) {
  return tessera::testing::run_command(
      fmt::format("TESSERA_CACHE_DIR='{}' {} {} 2>&1", (dir / "cache").string(), TESSERA_BINARY, args));
}

TEST(ModelFeatures, EveryRowWithTheFeaturesTheModelSeesAndTheAnalyticalTime) {
  const auto dir = testing::fresh_dir("model_features");
  const auto in = rows();
  write_rows(dir / "rows.jsonl", in);
  const auto out = dir / "features.csv";
  const auto r = cli(dir, fmt::format("tile model features {} --out {}", (dir / "rows.jsonl").string(), out.string()));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(fmt::format("wrote {} measurements with {} features", in.size(), tile::feature_names().size())),
            std::string::npos)
      << r.out;
  const auto csv = read_csv(out);
  ASSERT_EQ(csv.size(), in.size() + 1);
  const auto& head = csv.front();
  const std::vector<std::string> fixed = {"task", "family", "device_kind", "config", "cold_us", "analytical_us", "model_us"};
  ASSERT_EQ(head.size(), fixed.size() + tile::feature_names().size());
  for (std::size_t c = 0; c < head.size(); ++c)
    EXPECT_EQ(head[c], c < fixed.size() ? fixed[c] : tile::feature_names()[c - fixed.size()]);
  // Rows come back grouped as read_model_data keeps them; match them by shape and config.
  const auto data = read_model_data({dir / "rows.jsonl"});
  ASSERT_EQ(data.rows.size(), in.size());
  for (std::size_t i = 0; i < data.rows.size(); ++i) {
    const auto& m = data.rows[i];
    const auto& row = csv[i + 1];
    ASSERT_EQ(row.size(), head.size());
    EXPECT_EQ(row[0], m.task.id());
    EXPECT_EQ(row[1], tile::weight_family(m.task));
    EXPECT_EQ(row[2], "h200");
    EXPECT_EQ(row[3], tile::name(m.config));
    EXPECT_TRUE(near(std::stod(row[4]), m.cold_us)) << row[4];
    const tile::Prediction p = tile::predict(m.config, m.task, m.limits);
    EXPECT_TRUE(near(std::stod(row[5]), p.time_us)) << row[5];
    EXPECT_EQ(row[6], row[5]) << "no model: the analytical prediction";
    const auto f = tile::features(m.config, m.task, m.limits, p);
    for (std::size_t k = 0; k < f.size(); ++k)
      EXPECT_TRUE(near(std::stod(row[fixed.size() + k]), f[k])) << head[fixed.size() + k] << " " << row[fixed.size() + k];
  }
}

TEST(ModelFeatures, ModelUsIsTheLearnedModelsPrediction) {
  if (!tile::LearnedModel::available()) GTEST_SKIP() << "built without XGBoost (install libxgboost-dev): no learned model";
  const auto dir = testing::fresh_dir("model_features_model");
  write_rows(dir / "rows.jsonl", rows());
  const auto model = dir / "model.json";
  const auto train = cli(dir, fmt::format("tile model train {} --out {}", (dir / "rows.jsonl").string(), model.string()));
  ASSERT_EQ(train.code, 0) << train.out;
  // train says which shapes it learned from: outside them its ranking is unknown.
  EXPECT_NE(train.out.find("it learned from M 33-128, N 3584-4096, K 3584-4096"), std::string::npos) << train.out;
  const auto out = dir / "features.csv";
  const auto r = cli(dir, fmt::format("tile model features {} --model {} --out {}", (dir / "rows.jsonl").string(),
                                      model.string(), out.string()));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("model_us: learned h200"), std::string::npos) << r.out;
  const auto learned = tile::LearnedModel::load(model);
  const auto data = read_model_data({dir / "rows.jsonl"});
  const auto csv = read_csv(out);
  ASSERT_EQ(csv.size(), data.rows.size() + 1);
  int moved = 0;
  for (std::size_t i = 0; i < data.rows.size(); ++i) {
    const auto& m = data.rows[i];
    const double model_us = std::stod(csv[i + 1][6]), analytical_us = std::stod(csv[i + 1][5]);
    EXPECT_TRUE(near(model_us, learned.predict_us(m.config, m.task, m.limits))) << csv[i + 1][6];
    moved += !near(model_us, analytical_us);
  }
  EXPECT_GT(moved, 0) << "the trained model corrects the analytical times";
}

// A model file named without a folder goes to the working folder (it was an
// internal error: the save made the file's empty parent folder).
TEST(ModelFeatures, TrainWritesAModelNamedWithoutAFolderInTheWorkingFolder) {
  if (!tile::LearnedModel::available()) GTEST_SKIP() << "built without XGBoost (install libxgboost-dev): no learned model";
  const auto dir = testing::fresh_dir("model_train_here");
  write_rows(dir / "rows.jsonl", rows());
  const auto r = tessera::testing::run_command(fmt::format("cd '{}' && TESSERA_CACHE_DIR=cache {} tile model train rows.jsonl --out m.json 2>&1",
                                                           dir.string(), TESSERA_BINARY));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "m.json")) << r.out;
  EXPECT_EQ(tile::LearnedModel::load(dir / "m.json").describe(), "learned h200 (16 rows), pairs");  // the default pair layer
}

TEST(ModelFeatures, ABadFileNameOrAMissingModelIsAnErrorThatWritesNothing) {
  const auto dir = testing::fresh_dir("model_features_bad");
  write_rows(dir / "rows.jsonl", rows());
  const auto txt = cli(dir, fmt::format("tile model features {} --out {}", (dir / "rows.jsonl").string(),
                                        (dir / "features.txt").string()));
  EXPECT_EQ(txt.code, 2) << txt.out;
  EXPECT_NE(txt.out.find("ends in .csv"), std::string::npos) << txt.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "features.txt"));
  const auto missing = cli(dir, fmt::format("tile model features {} --model {} --out {}", (dir / "rows.jsonl").string(),
                                            (dir / "nosuch.json").string(), (dir / "features.csv").string()));
  EXPECT_NE(missing.code, 0) << missing.out;
  EXPECT_NE(missing.out.find("nosuch"), std::string::npos) << missing.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "features.csv"));
}

}  // namespace
}  // namespace tessera::bench
