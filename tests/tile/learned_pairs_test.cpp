// The learned cost model's pair layer (TrainOptions::pairs): it orders a
// shape's fastest configs by which of two is faster, keeps the times the
// layers under it gave (only their order changes), and survives a save and
// load.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/tasks_file.hpp"
#include "tile/cost_model.hpp"
#include "tile/features.hpp"
#include "tile/learned_model.hpp"

namespace tessera::tile {
namespace {

#define REQUIRE_XGBOOST() \
  if (!LearnedModel::available()) GTEST_SKIP() << "built without XGBoost (install libxgboost-dev): no learned model"

// Tiles 128 or more wide measured 1.6 times as slow as the analytical model
// says, everything else as it says: an order it gets wrong on most shapes.
double measured_us(const Ranked& r) { return r.prediction.analytical_us * (r.config.bn >= 128 ? 1.6 : 1.0); }

std::vector<Measurement> planted(const std::vector<std::string>& shapes) {
  std::vector<Measurement> rows;
  for (const auto& s : shapes) {
    const Task t = task_from_shape(s);
    for (const auto& r : rank_configs(t, Limits{}, 48)) rows.push_back({t, r.config, Limits{}, "h200", measured_us(r)});
  }
  return rows;
}

// Layers under the pair layer too weak to learn the planted factor: one
// stump, shrunk to nothing. What the model ranks right beyond the analytical model is
// then the pair layer's.
TrainOptions weak(int pairs) {
  TrainOptions o;
  o.target = TrainOptions::Target::residual;
  o.trees = 1;
  o.max_depth = 1;
  o.learning_rate = 0.001;
  o.pairs = pairs;
  o.pair_trees = 40;
  o.pair_max_depth = 4;
  return o;
}

const std::vector<std::string> kTrain = {"7x4096x4096", "33x8192x2048", "100x14336x4096", "257x3584x3584",
                                         "1024x1024x8192"};

std::vector<std::vector<float>> rows_of(const std::vector<Ranked>& ranked, const Task& t) {
  std::vector<std::vector<float>> out;
  for (const auto& r : ranked) out.push_back(features(r.config, t, Limits{}, predict(r.config, t, Limits{})));
  return out;
}

// Of the pairs of configs whose measured times differ by 25% or more, the share the model orders right.
double clearly_ordered(const LearnedModel& m) {
  int pairs = 0, right = 0;
  for (const auto& s : {"16x6144x5120", "64x2048x7168", "200x10240x2560"}) {
    const Task t = task_from_shape(s);
    const auto ranked = rank_configs(t, Limits{}, 40);  // the analytical order, swap-AB's among them
    const auto predicted = predict_all([&] {
      std::vector<Config> c;
      for (const auto& r : ranked) c.push_back(r.config);
      return c;
    }(), t, Limits{}, m);
    for (std::size_t i = 0; i < ranked.size(); ++i)
      for (std::size_t j = 0; j < ranked.size(); ++j)
        if (measured_us(ranked[i]) < 0.8 * measured_us(ranked[j]))
          ++pairs, right += predicted[i].time_us < predicted[j].time_us;
  }
  EXPECT_GT(pairs, 100);
  return double(right) / pairs;
}

TEST(LearnedPairs, OrderHeldOutShapesTheLayersUnderThemCannot) {
  REQUIRE_XGBOOST();
  const auto rows = planted(kTrain);
  const LearnedModel without = LearnedModel::train(rows, LearnedModel{}, weak(0), "h200");
  const LearnedModel with = LearnedModel::train(rows, LearnedModel{}, weak(8), "h200");
  EXPECT_FALSE(without.has_pairs());
  EXPECT_TRUE(with.has_pairs());
  EXPECT_EQ(with.describe(), without.describe() + ", pairs");
  const double before = clearly_ordered(without), after = clearly_ordered(with);
  std::printf("clearly ordered pairs right: %.3f without the pair layer, %.3f with it\n", before, after);
  EXPECT_GT(after, 0.9) << "with the pair layer; without it " << before;
  EXPECT_GT(after, before + 0.1);
}

TEST(LearnedPairs, ReorderOnlyTheFastestAndKeepTheirTimes) {
  REQUIRE_XGBOOST();
  const LearnedModel m = LearnedModel::train(planted(kTrain), LearnedModel{}, weak(8), "h200");
  const Task t = task_from_shape("64x2048x7168");
  const auto ranked = rank_configs(t, Limits{}, kPairReorder + 32);
  ASSERT_GT(ranked.size(), kPairReorder);
  const auto rows = rows_of(ranked, t);
  const auto plain = m.residuals(rows);
  const auto ordered = m.shape_residuals(rows);
  ASSERT_EQ(ordered.size(), plain.size());
  // log2 times: the same set, handed out in another order among the fastest kPairReorder.
  std::vector<double> a, b;
  int moved = 0;
  // The analytical log time as the model reads it, from the features (a float).
  const auto& names = feature_names();
  const std::size_t col = std::size_t(std::find(names.begin(), names.end(), "log2_pred_us") - names.begin());
  ASSERT_LT(col, names.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double analytical = rows[i][col];
    a.push_back(analytical + plain[i]);
    b.push_back(analytical + ordered[i]);
    moved += std::abs(a.back() - b.back()) > 1e-9;
  }
  EXPECT_GT(moved, 0) << "the planted factor reorders the wide tiles";
  auto fastest = a;
  std::sort(fastest.begin(), fastest.end());
  const double cut = fastest[kPairReorder - 1];
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (a[i] <= cut) continue;
    EXPECT_DOUBLE_EQ(b[i], a[i]) << "config " << i << " is not among the fastest " << kPairReorder;
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-9);
  // One config: nothing to order.
  EXPECT_EQ(m.shape_residuals({rows.front()}), m.residuals({rows.front()}));
}

// A search's refit of its own measurements stacks on the stored model: what
// it adds still counts on top of the pair layer's order.
TEST(LearnedPairs, ARefitOverThemStillCounts) {
  REQUIRE_XGBOOST();
  const LearnedModel m = LearnedModel::train(planted(kTrain), LearnedModel{}, weak(8), "h200");
  const Task t = task_from_shape("64x2048x7168");
  std::vector<Measurement> measured;
  for (const auto& r : rank_configs(t, Limits{}, 24))
    measured.push_back({t, r.config, Limits{}, "h200", r.prediction.analytical_us * (r.config.stages > 3 ? 1.5 : 1.0)});
  const LearnedModel refit = LearnedModel::train(measured, m, online_train_options(), "h200");
  ASSERT_TRUE(refit.has_pairs());
  const auto rows = rows_of(rank_configs(t, Limits{}, 48), t);
  const auto before = m.shape_residuals(rows), after = refit.shape_residuals(rows);
  const auto plain_before = m.residuals(rows), plain_after = refit.residuals(rows);
  int changed = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_NEAR(after[i] - before[i], plain_after[i] - plain_before[i], 1e-6) << "config " << i;
    changed += std::abs(plain_after[i] - plain_before[i]) > 1e-3;
  }
  EXPECT_GT(changed, 0) << "the refit learned the planted stages";
}

TEST(LearnedPairs, NoneWhereNoShapeHasTwoConfigs) {
  REQUIRE_XGBOOST();
  std::vector<Measurement> one;
  for (const auto& s : kTrain) one.push_back(planted({s}).front());
  const LearnedModel m = LearnedModel::train(one, LearnedModel{}, weak(8), "h200");
  EXPECT_FALSE(m.empty());
  EXPECT_FALSE(m.has_pairs());
}

TEST(LearnedPairs, SaveAndLoadTheSameOrder) {
  REQUIRE_XGBOOST();
  const LearnedModel m = LearnedModel::train(planted({"33x8192x2048", "257x3584x3584"}), LearnedModel{}, weak(4), "h200");
  const auto file = std::filesystem::temp_directory_path() / "tessera_learned_pairs_test.json";
  m.save(file);
  const LearnedModel back = LearnedModel::load(file);
  std::filesystem::remove(file);
  EXPECT_TRUE(back.has_pairs());
  const Task t = task_from_shape("100x14336x4096");
  const auto rows = rows_of(rank_configs(t, Limits{}, 24), t);
  EXPECT_EQ(back.shape_residuals(rows), m.shape_residuals(rows));
}

}  // namespace
}  // namespace tessera::tile
