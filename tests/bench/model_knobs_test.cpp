// The one-knob pairs table (`tessera tile model eval --model FILE --knobs`):
// only pairs of one shape's configs that differ in exactly one field of the
// name count, each change is read in one direction with its measured and
// predicted ratios, and a change seen fewer times than asked is left out.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "bench/model_data.hpp"
#include "bench/model_eval.hpp"
#include "bench/model_knobs.hpp"
#include "core/error.hpp"
#include "core/task.hpp"
#include "tests/bench/synthetic.hpp"
#include "tests/testing.hpp"
#include "tile/cost_model.hpp"
#include "tile/learned_model.hpp"

namespace tessera::bench {
namespace {

tile::Measurement at(const Task& task, const tile::Config& c, double us) { return testing::timed_row(task, c, us); }

double analytical(const Task& t, const tile::Config& c) { return tile::predict(c, t, tile::Limits{}).time_us; }

TEST(ModelKnobs, OnlyPairsThatDifferInOneFieldCountEachReadOneWay) {
  const Task task = task_from_shape("257x4096x4096");
  // The model's pick, grouped: a one-wave pick is row-major in the shortlist since 2026-12-03.
  tile::Config base = tile::rank_configs(task, tile::Limits{}, 1).front().config;
  base.raster = 8;
  tile::Config r0 = base, deeper = base, both = base;
  r0.raster = 0;
  deeper.stages = base.stages + 1, deeper.prefetch = base.prefetch + 1;
  both.raster = 0, both.stages = base.stages + 1, both.prefetch = base.prefetch + 1;  // two fields: pairs with base never count
  const std::vector<tile::Measurement> rows = {at(task, base, 100), at(task, r0, 110), at(task, deeper, 95),
                                               at(task, both, 120)};
  const auto changes = knob_changes(tile::LearnedModel{}, rows, 1);
  // base-r0 (raster), base-deeper (stages), r0-both (stages), deeper-both (raster).
  ASSERT_EQ(changes.size(), 2u);
  for (const auto& k : changes) {
    EXPECT_EQ(k.pairs, 2) << k.knob;
    if (k.knob == "raster") {
      EXPECT_EQ(k.from, "r0");
      EXPECT_EQ(k.to, "r8");
      // time(r8) / time(r0): base against r0, deeper against both.
      EXPECT_NEAR(k.measured, std::sqrt((100.0 / 110) * (95.0 / 120)) - 1, 1e-12);
      const double pred = std::sqrt(analytical(task, base) / analytical(task, r0) * analytical(task, deeper) /
                                    analytical(task, both));
      EXPECT_NEAR(k.predicted, pred - 1, 1e-12);
      EXPECT_DOUBLE_EQ(k.predicted, k.analytical) << "an empty model is the analytical one";
    } else {
      EXPECT_EQ(k.knob, "stages");
      EXPECT_NEAR(k.measured, std::sqrt((95.0 / 100) * (120.0 / 110)) - 1, 1e-12);
    }
    EXPECT_GE(k.agree, 0);
    EXPECT_LE(k.agree, 1);
  }
  EXPECT_TRUE(knob_changes(tile::LearnedModel{}, rows, 3).empty()) << "each change is seen twice";
}

// A model that ranks the pair the measured way agrees; one that ranks it the
// other way does not. The analytical model's order is what the test reads.
TEST(ModelKnobs, AgreementIsTheShareOfPairsOrderedAsMeasured) {
  const Task task = task_from_shape("128x4096x4096");
  const tile::Config base = tile::rank_configs(task, tile::Limits{}, 1).front().config;
  tile::Config split = base;  // split two ways along K: predicted slower or faster, never the same
  split.split_k = base.split_k * 2;
  const double a = analytical(task, base), b = analytical(task, split);
  ASSERT_NE(a, b);
  const auto as_predicted = knob_changes(tile::LearnedModel{}, {at(task, base, a), at(task, split, b)}, 1);
  ASSERT_EQ(as_predicted.size(), 1u);
  EXPECT_EQ(as_predicted[0].knob, "split-K");
  EXPECT_EQ(as_predicted[0].agree, 1);
  const auto reversed = knob_changes(tile::LearnedModel{}, {at(task, base, b), at(task, split, a)}, 1);
  EXPECT_EQ(reversed[0].agree, 0);
}

// An epilogue with an underscore in its name is not a field.
TEST(ModelKnobs, AFusedEpilogueIsNotAKnob) {
  Task task = task_from_shape("1024x1024x1024");
  task.epilogue = Epilogue::bias_gelu;
  const tile::Config base = tile::rank_configs(task, tile::Limits{}, 1).front().config;
  tile::Config other = base;
  other.raster = base.raster == 8 ? 4 : 8;
  const auto changes = knob_changes(tile::LearnedModel{}, {at(task, base, 10), at(task, other, 11)}, 1);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].knob, "raster");
}

// Given predictions are read row by row, as a model's would be; one
// prediction short is a tessera bug, not a table.
TEST(ModelKnobs, GivenPredictionsAreReadLikeAModels) {
  const Task task = task_from_shape("257x4096x4096");
  std::vector<tile::Measurement> rows;
  std::vector<double> predicted;
  for (const auto& r : tile::rank_configs(task, tile::Limits{}, 40)) {
    rows.push_back(at(task, r.config, r.prediction.time_us * (r.config.raster == 8 ? 1.0 : 1.2)));
    predicted.push_back(r.prediction.time_us);
  }
  const auto given = knob_changes(rows, predicted, 1), by_model = knob_changes(tile::LearnedModel{}, rows, 1);
  ASSERT_FALSE(given.empty());
  ASSERT_EQ(given.size(), by_model.size());
  for (std::size_t i = 0; i < given.size(); ++i) {
    EXPECT_EQ(given[i].knob, by_model[i].knob);
    EXPECT_EQ(given[i].pairs, by_model[i].pairs);
    EXPECT_DOUBLE_EQ(given[i].predicted, by_model[i].predicted);
  }
  predicted.pop_back();
  EXPECT_THROW(knob_changes(rows, predicted, 1), Error);
}

// Without --model, --knobs reads each fold's rows as the model trained
// without that fold predicted them (the cross-validation's own predictions).
TEST(ModelKnobs, CrossValidationKeepsEachHeldOutRowsPrediction) {
  if (!tile::LearnedModel::available()) GTEST_SKIP() << "built without XGBoost (install libxgboost-dev): no learned model";
  const std::vector<tile::Measurement> rows = testing::learnable_rows();
  const auto cv = cross_validate(rows, 2, tile::LearnedModel{}, tile::TrainOptions{}, "h200");
  ASSERT_EQ(cv.held_rows.size(), rows.size()) << "every row is judged once, in its fold";
  ASSERT_EQ(cv.held_predicted_us.size(), rows.size());
  for (double us : cv.held_predicted_us) EXPECT_GT(us, 0);
  const auto dir = testing::fresh_dir("model_knobs_cli");
  write_rows(dir / "rows.jsonl", rows);
  const auto r = tessera::testing::run_command(
      fmt::format("{} tile model eval {} --folds 2 --knobs 2>&1", TESSERA_BINARY, (dir / "rows.jsonl").string()));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("one-knob pairs among each shape's measured configs"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tessera::bench
