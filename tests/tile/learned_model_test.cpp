// The learned cost model: it learns a planted correction of the analytical
// model on shapes it was not trained on, stacks on a prior (transfer), and
// survives a save and load.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "core/tasks_file.hpp"
#include "tile/cost_model.hpp"
#include "tile/features.hpp"
#include "tile/learned_model.hpp"

namespace tessera::tile {
namespace {

#define REQUIRE_XGBOOST() \
  if (!LearnedModel::available()) GTEST_SKIP() << "built without XGBoost (install libxgboost-dev): no learned model"

// Measurements whose times are the analytical prediction times `factor(config)`.
std::vector<Measurement> planted(const std::vector<std::string>& shapes, const std::string& kind,
                                 const std::function<double(const Config&)>& factor, std::size_t per_shape = 48) {
  std::vector<Measurement> rows;
  for (const auto& s : shapes) {
    const Task t = task_from_shape(s);
    const Limits l;
    for (const auto& r : rank_configs(t, l, per_shape)) rows.push_back({t, r.config, l, kind, r.prediction.time_us * factor(r.config)});
  }
  return rows;
}

double swap_factor(const Config& c) { return c.swap_ab ? 2.0 : 1.0; }

TrainOptions residual_options() {
  TrainOptions o;
  o.target = TrainOptions::Target::residual;
  return o;
}

TEST(LearnedModel, DeviceKindIsTheGpuModelsToken) {
  EXPECT_EQ(device_kind("NVIDIA H200"), "h200");
  EXPECT_EQ(device_kind("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(device_kind("NVIDIA A100-SXM4-80GB"), "a100");
  EXPECT_EQ(device_kind("NVIDIA L40S"), "l40s");
  EXPECT_EQ(device_kind(""), "unknown");
  EXPECT_EQ(device_kind("unknown"), "unknown");
}

TEST(LearnedModel, EmptyIsTheAnalyticalModel) {
  const LearnedModel m;
  const Task t = task_from_shape("512x512x512");
  const auto r = rank_configs(t, Limits{}, 3);
  for (const auto& x : r) EXPECT_DOUBLE_EQ(m.predict_us(x.config, t, Limits{}), x.prediction.analytical_us);
  EXPECT_EQ(m.describe(), "analytical");
}

TEST(LearnedModel, LearnsAPlantedCorrectionOnShapesItNeverSaw) {
  REQUIRE_XGBOOST();
  const auto train = planted({"7x4096x4096", "33x8192x2048", "100x14336x4096", "257x3584x3584", "1024x1024x8192"},
                             "h200", swap_factor);
  const LearnedModel m = LearnedModel::train(train, LearnedModel{}, residual_options(), "h200");
  EXPECT_EQ(m.device_kind(), "h200");
  // Held out: other shapes (other N and K too).
  int checked = 0;
  for (const auto& s : {"16x6144x5120", "64x2048x7168", "200x10240x2560"}) {
    const Task t = task_from_shape(s);
    for (const auto& r : rank_configs(t, Limits{}, 32)) {
      const double ratio = m.predict_us(r.config, t, Limits{}) / r.prediction.analytical_us;
      EXPECT_NEAR(std::log2(ratio), std::log2(swap_factor(r.config)), 0.25) << s << " " << name(r.config);
      ++checked;
    }
  }
  EXPECT_GT(checked, 60);
}

TEST(LearnedModel, AdaptsAPriorFromAnotherDeviceWithFewRows) {
  REQUIRE_XGBOOST();
  // The prior learned "swap-AB costs 2x" on one device; the new device's few
  // rows say it costs 3x: the stacked model moves towards 3x, the prior stays.
  const std::vector<std::string> shapes = {"7x4096x4096", "33x8192x2048", "257x3584x3584"};
  const LearnedModel prior = LearnedModel::train(planted(shapes, "h100", swap_factor), LearnedModel{}, residual_options(), "h100");
  const auto three = [](const Config& c) { return c.swap_ab ? 3.0 : 1.0; };
  const auto few = planted({"100x14336x4096"}, "h200", three, 12);
  const LearnedModel adapted = LearnedModel::train(few, prior, online_train_options(), "h200");
  EXPECT_EQ(adapted.device_kind(), "h200");
  EXPECT_EQ(adapted.rows(), prior.rows() + int(few.size()));
  EXPECT_NE(adapted.describe().find("on h100"), std::string::npos) << adapted.describe();
  const Task t = task_from_shape("64x2048x7168");
  double prior_err = 0, adapted_err = 0;
  int n = 0;
  for (const auto& r : rank_configs(t, Limits{}, 32)) {
    if (!r.config.swap_ab) continue;
    prior_err += std::abs(std::log2(prior.predict_us(r.config, t, Limits{}) / r.prediction.analytical_us) - std::log2(3.0));
    adapted_err += std::abs(std::log2(adapted.predict_us(r.config, t, Limits{}) / r.prediction.analytical_us) - std::log2(3.0));
    ++n;
  }
  ASSERT_GT(n, 3);
  EXPECT_LT(adapted_err, 0.5 * prior_err) << "prior " << prior_err / n << ", adapted " << adapted_err / n;
}

// The default, rank:pairwise then a level per shape: on shapes it never saw,
// a planted penalty reorders the configs as measured, and within a shape the
// predicted times keep the measured ratios (the fitted spread), not the
// ranking loss's scores. (A held-out shape's level is the level layer's
// extrapolation from shapes it saw: docs/tile.md gives its error on real data.)
TEST(LearnedModel, TheRankingTargetOrdersHeldOutShapesAndKeepsTimesNearMeasured) {
  REQUIRE_XGBOOST();
  const auto train = planted({"7x4096x4096", "33x8192x2048", "100x14336x4096", "257x3584x3584", "1024x1024x8192"},
                             "h200", swap_factor);
  TrainOptions pairwise;
  pairwise.target = TrainOptions::Target::pairwise;
  const LearnedModel m = LearnedModel::train(train, LearnedModel{}, pairwise, "h200");
  EXPECT_EQ(m.describe(), "learned h200 (" + std::to_string(train.size()) + " rows)") << "one model, its two halves";
  int pairs = 0, right = 0, near = 0, configs = 0;
  for (const auto& s : {"16x6144x5120", "64x2048x7168", "200x10240x2560"}) {
    const Task t = task_from_shape(s);
    const auto ranked = rank_configs(t, Limits{}, 32);
    std::vector<double> predicted, measured, error;
    for (const auto& r : ranked) {
      predicted.push_back(m.predict_us(r.config, t, Limits{}));
      measured.push_back(r.prediction.analytical_us * swap_factor(r.config));
      error.push_back(std::log2(predicted.back() / measured.back()));
    }
    auto sorted = error;
    std::sort(sorted.begin(), sorted.end());
    for (const double e : error) near += std::abs(e - sorted[sorted.size() / 2]) < 0.5, ++configs;
    for (std::size_t i = 0; i < ranked.size(); ++i)
      for (std::size_t j = 0; j < ranked.size(); ++j)
        if (measured[i] < 0.8 * measured[j]) ++pairs, right += predicted[i] < predicted[j];
  }
  ASSERT_GT(pairs, 100);
  EXPECT_GT(double(right) / pairs, 0.9) << right << " of " << pairs << " clearly ordered pairs";
  EXPECT_GT(double(near) / configs, 0.8) << near << " of " << configs << " within 2^0.5 of the measured time, less the shape's median error";
}

// The default target fits a ranking and a residual side by side on the same
// rows and averages their log times: its prediction is the geometric mean of
// the two models trained alone (training is deterministic), stored and read
// back as one model.
TEST(LearnedModel, TheBlendTargetIsTheGeometricMeanOfTheRankingAndTheResidualFits) {
  REQUIRE_XGBOOST();
  ASSERT_EQ(TrainOptions{}.target, TrainOptions::Target::blend);
  const auto train = planted({"7x4096x4096", "33x8192x2048", "257x3584x3584"}, "h200", swap_factor, 24);
  const LearnedModel prior = LearnedModel::train(planted({"100x14336x4096"}, "h100", swap_factor, 24), LearnedModel{},
                                                 residual_options(), "h100");
  TrainOptions pairwise;
  pairwise.target = TrainOptions::Target::pairwise;
  const LearnedModel blend = LearnedModel::train(train, prior, TrainOptions{}, "h200");
  const LearnedModel ranking = LearnedModel::train(train, prior, pairwise, "h200");
  const LearnedModel residual = LearnedModel::train(train, prior, residual_options(), "h200");
  EXPECT_EQ(blend.describe(), ranking.describe()) << "one model on its prior";
  EXPECT_EQ(blend.rows(), ranking.rows()) << "its rows counted once";
  const auto file = std::filesystem::temp_directory_path() / "tessera_blend_model_test.json";
  blend.save(file);
  const LearnedModel back = LearnedModel::load(file);
  std::filesystem::remove(file);
  const Task t = task_from_shape("64x2048x7168");
  int differ = 0;
  for (const auto& r : rank_configs(t, Limits{}, 24)) {
    const double b = blend.predict_us(r.config, t, Limits{});
    const double p = ranking.predict_us(r.config, t, Limits{}), q = residual.predict_us(r.config, t, Limits{});
    EXPECT_NEAR(std::log2(b), 0.5 * (std::log2(p) + std::log2(q)), 1e-5) << name(r.config);
    EXPECT_DOUBLE_EQ(back.predict_us(r.config, t, Limits{}), b);
    differ += std::abs(std::log2(p / q)) > 1e-3;
  }
  EXPECT_GT(differ, 0) << "the two fits disagree somewhere, so the average is a test of the blend";
  // A blend layer without the ranking it averages with is a broken file.
  auto j = blend.to_json();
  nlohmann::json only_blend = nlohmann::json::array();
  for (const auto& l : j["layers"])
    if (l["role"] == 3 || l["device_kind"] == "h100") only_blend.push_back(l);
  j["layers"] = only_blend;
  EXPECT_THROW(LearnedModel::from_json(j), Error);
}

// A layer stacked with a reach changes the prior's predictions near the
// shapes it learned from, exactly as without one, and leaves shapes far from
// them at the prior's, also after a save and load; without a prior there is
// nothing to fall back to, and the reach is not used.
TEST(LearnedModel, AStackedLayerWithAReachLeavesFarShapesToItsPrior) {
  REQUIRE_XGBOOST();
  const LearnedModel prior = LearnedModel::train(planted({"100x14336x4096"}, "h100", swap_factor, 24), LearnedModel{},
                                                 residual_options(), "h100");
  const auto stages = [](const Config& c) { return c.stages > 4 ? 0.6 : 1.2; };
  const auto train = planted({"7x4096x4096", "33x8192x2048", "257x3584x3584"}, "h200", stages, 24);
  TrainOptions reach, everywhere;
  reach.reach = 1.0;
  const LearnedModel gated = LearnedModel::train(train, prior, reach, "h200");
  const LearnedModel ungated = LearnedModel::train(train, prior, everywhere, "h200");
  EXPECT_NE(gated.describe().find("reach 1"), std::string::npos) << gated.describe();
  const auto file = std::filesystem::temp_directory_path() / "tessera_reach_model_test.json";
  gated.save(file);
  const LearnedModel back = LearnedModel::load(file);
  std::filesystem::remove(file);
  const Task near = task_from_shape("300x3584x3584");  // 0.22 from 257x3584x3584 in log2 M
  const Task far = task_from_shape("2048x512x512");    // 4.9 from the nearest
  int near_moved = 0, far_moved = 0;
  for (const auto& r : rank_configs(near, Limits{}, 24)) {
    const double g = gated.predict_us(r.config, near, Limits{});
    EXPECT_DOUBLE_EQ(g, ungated.predict_us(r.config, near, Limits{})) << name(r.config);
    EXPECT_DOUBLE_EQ(back.predict_us(r.config, near, Limits{}), g);
    near_moved += std::abs(std::log2(g / prior.predict_us(r.config, near, Limits{}))) > 1e-3;
  }
  for (const auto& r : rank_configs(far, Limits{}, 24)) {
    const double p = prior.predict_us(r.config, far, Limits{});
    EXPECT_DOUBLE_EQ(gated.predict_us(r.config, far, Limits{}), p) << name(r.config);
    EXPECT_DOUBLE_EQ(back.predict_us(r.config, far, Limits{}), p) << name(r.config);
    far_moved += std::abs(std::log2(ungated.predict_us(r.config, far, Limits{}) / p)) > 1e-3;
  }
  EXPECT_GT(near_moved, 0) << "within its reach the layer applies";
  EXPECT_GT(far_moved, 0) << "without a reach the layer moves the far shape: the reach is what keeps it";
  // No prior: the reach is not used.
  const LearnedModel alone = LearnedModel::train(train, LearnedModel{}, reach, "h200");
  const LearnedModel alone_everywhere = LearnedModel::train(train, LearnedModel{}, everywhere, "h200");
  for (const auto& r : rank_configs(far, Limits{}, 8))
    EXPECT_DOUBLE_EQ(alone.predict_us(r.config, far, Limits{}), alone_everywhere.predict_us(r.config, far, Limits{}));
  // A malformed reach is refused when read.
  auto j = gated.to_json();
  for (auto& l : j["layers"])
    if (l.contains("reach")) l["reach"]["radius"] = -1;
  EXPECT_THROW(LearnedModel::from_json(j), Error);
}

TEST(LearnedModel, RankConfigsOrdersByTheLearnedTimes) {
  REQUIRE_XGBOOST();
  const auto train = planted({"7x4096x4096", "33x8192x2048", "257x3584x3584"}, "h200",
                             [](const Config& c) { return c.swap_ab ? 0.25 : 1.0; });
  const LearnedModel m = LearnedModel::train(train, LearnedModel{}, TrainOptions{}, "h200");
  const Task t = task_from_shape("2048x2048x2048");  // TN: swap-AB is legal; analytically it rarely leads here
  const auto analytical = rank_configs(t, Limits{}, 1);
  const auto learned = rank_configs(t, Limits{}, 1, m);
  ASSERT_FALSE(learned.empty());
  EXPECT_TRUE(learned.front().config.swap_ab) << name(learned.front().config);
  EXPECT_LT(learned.front().prediction.time_us, learned.front().prediction.analytical_us);
  EXPECT_DOUBLE_EQ(analytical.front().prediction.time_us, analytical.front().prediction.analytical_us);
}

TEST(LearnedModel, SavesAndLoadsTheSamePredictions) {
  REQUIRE_XGBOOST();
  // A ranking model (two halves, a fitted spread) under an online residual layer.
  const LearnedModel prior = LearnedModel::train(planted({"33x8192x2048", "7x4096x4096"}, "h100", swap_factor, 24),
                                                 LearnedModel{}, TrainOptions{}, "h100");
  const LearnedModel m = LearnedModel::train(planted({"257x3584x3584"}, "h200", swap_factor, 24), prior,
                                             online_train_options(), "h200");
  const auto file = std::filesystem::temp_directory_path() / "tessera_learned_model_test.json";
  m.save(file);
  const LearnedModel back = LearnedModel::load(file);
  std::filesystem::remove(file);
  EXPECT_EQ(back.describe(), m.describe());
  const Task t = task_from_shape("100x14336x4096");
  for (const auto& r : rank_configs(t, Limits{}, 16))
    EXPECT_DOUBLE_EQ(back.predict_us(r.config, t, Limits{}), m.predict_us(r.config, t, Limits{}));
}

// The file carries each layer's trees as XGBoost's UBJSON in base64 (schema 2).
// cost_model_v1.json was written before, with XGBoost's JSON trees (a small
// model of 40 H200 rows with a pair layer, `tile model train` at 80195bc): it
// still loads, and written again in the new form it predicts the same. When the
// feature set changes, such files cannot load anyway: drop this fixture and the
// reading of schema 1 then.
TEST(LearnedModel, AFileOfJsonTreesLoadsAndPredictsTheSameOnceRewritten) {
  REQUIRE_XGBOOST();
  const auto v1 = std::filesystem::path(TESSERA_SOURCE_DIR) / "tests" / "tile" / "cost_model_v1.json";
  const LearnedModel old = LearnedModel::load(v1);
  EXPECT_EQ(old.rows(), 40);
  const nlohmann::json j = old.to_json();
  EXPECT_EQ(j.at("schema"), "tessera.cost_model/2");
  EXPECT_TRUE(old.has_pairs());
  ASSERT_FALSE(j.at("layers").empty());
  for (const auto& l : j.at("layers")) {
    EXPECT_FALSE(l.contains("booster"));
    EXPECT_TRUE(l.at("booster_ubj").is_string());
  }
  const LearnedModel back = LearnedModel::from_json(j);
  EXPECT_EQ(back.describe(), old.describe());
  for (const char* shape : {"100x8192x8192", "7x4096x4096", "4096x4096x4096"}) {
    const Task t = task_from_shape(shape);
    std::vector<std::vector<float>> rows;
    for (const auto& r : rank_configs(t, Limits{}, 32)) {
      EXPECT_DOUBLE_EQ(back.predict_us(r.config, t, Limits{}), old.predict_us(r.config, t, Limits{})) << shape;
      rows.push_back(features(r.config, t, Limits{}, r.prediction));
    }
    EXPECT_EQ(back.shape_residuals(rows), old.shape_residuals(rows)) << shape << ": the pair layer's order";
  }
  auto bad = j;
  bad["layers"][0]["booster_ubj"] = "not base64!";
  EXPECT_THROW(LearnedModel::from_json(bad), Error);
  bad["layers"][0]["booster_ubj"] = "aGVsbG8=";  // base64, but of "hello": XGBoost's error, not a crash
  EXPECT_THROW(LearnedModel::from_json(bad), Error);
  bad["layers"][0]["booster_ubj"] = 12;
  EXPECT_THROW(LearnedModel::from_json(bad), Error);
}

// Every boosting round of every layer is reported, with the rounds in all: a
// blend's three layers and the pair layer, or the residual target's one.
TEST(LearnedModel, ReportsEveryBoostingRound) {
  REQUIRE_XGBOOST();
  const auto rows = planted({"33x8192x2048", "7x4096x4096"}, "h200", swap_factor, 8);
  std::vector<std::pair<int, int>> seen;
  TrainOptions o;
  o.trees = 7;
  o.pairs = 2;
  o.pair_trees = 5;
  o.on_round = [&](int done, int total) { seen.emplace_back(done, total); };
  LearnedModel::train(rows, LearnedModel{}, o, "h200");
  ASSERT_EQ(seen.size(), 3u * 7 + 5);
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], std::make_pair(int(i) + 1, 26));
  seen.clear();
  o.target = TrainOptions::Target::residual;
  o.pairs = 0;
  LearnedModel::train(rows, LearnedModel{}, o, "h200");
  ASSERT_EQ(seen.size(), 7u);
  EXPECT_EQ(seen.back(), std::make_pair(7, 7));
}

// A model keeps the weight families (N x K) of every row it learned from, its
// prior's too, in its file: what `tile model eval --model` must not judge it on.
TEST(LearnedModel, KeepsTheFamiliesItWasTrainedOn) {
  REQUIRE_XGBOOST();
  EXPECT_EQ(weight_family(task_from_shape("7x6144x4096")), "6144x4096");
  ASSERT_TRUE(LearnedModel{}.trained_families().has_value());
  EXPECT_TRUE(LearnedModel{}.trained_families()->empty()) << "the analytical model saw nothing";
  const LearnedModel prior = LearnedModel::train(planted({"33x8192x2048", "7x8192x2048"}, "h100", swap_factor, 8),
                                                 LearnedModel{}, TrainOptions{}, "h100");
  const LearnedModel m = LearnedModel::train(planted({"257x3584x3584"}, "h200", swap_factor, 8), prior,
                                             online_train_options(), "h200");
  const std::set<std::string> both = {"8192x2048", "3584x3584"};
  ASSERT_TRUE(m.trained_families().has_value());
  EXPECT_EQ(*m.trained_families(), both);
  EXPECT_EQ(*LearnedModel::from_json(m.to_json()).trained_families(), both);
  // A file written before models kept them says nothing, rather than "none".
  auto old = m.to_json();
  old.erase("trained_families");
  EXPECT_FALSE(LearnedModel::from_json(old).trained_families().has_value());
  EXPECT_FALSE(LearnedModel::train(planted({"64x1024x1024"}, "h200", swap_factor, 4), LearnedModel::from_json(old),
                                   online_train_options(), "h200")
                   .trained_families()
                   .has_value())
      << "stacked on a prior of unknown training, the model's is unknown too";
}

// llm_shapes_heldout2.json and llm_shapes_heldout3.json are the sets still held
// out for the shipped H200 model (datasets/README): a model retrained on their
// rows and shipped would be judged on what it learned. The file keeps the
// families it learned, its prior's too, so a held-out weight among them fails
// here.
TEST(LearnedModel, TheShippedH200ModelNeverLearnedItsHeldOutLayers) {
  REQUIRE_XGBOOST();
  const std::filesystem::path root(TESSERA_SOURCE_DIR);
  const LearnedModel m = LearnedModel::load(root / "datasets" / "cost_models" / "h200.json");
  ASSERT_TRUE(m.trained_families().has_value()) << "the shipped model must say what it learned";
  EXPECT_GE(m.trained_families()->size(), 100u);
  for (const char* f : {"llm_shapes_heldout2.json", "llm_shapes_heldout3.json"}) {
    const auto held = load_tasks_file(root / "datasets" / f);
    ASSERT_GE(held.size(), 60u) << f;
    for (const auto& t : held)
      EXPECT_FALSE(m.trained_families()->count(weight_family(t))) << f << " " << t.id()
                                                                   << ": a held-out weight the shipped model learned";
  }
}

// A device's own model first, then the pooled one (kEveryKind), folder by
// folder: the pooled model in $TESSERA_COST_MODEL_DIR comes before the H200
// model shipped in datasets/cost_models/ (which the old order, own kind in any
// folder first, took). The row counts tell the test's models from those.
TEST(LearnedModel, ADeviceUsesItsOwnModelBeforeThePooledOne) {
  REQUIRE_XGBOOST();
  if (const char* f = std::getenv("TESSERA_COST_MODEL"); f && *f) GTEST_SKIP() << "TESSERA_COST_MODEL pins one file";
  const auto dir = std::filesystem::temp_directory_path() / "tessera_model_lookup_test";
  std::filesystem::remove_all(dir);
  const auto train = [&](const std::string& kind, int per_shape) {
    LearnedModel::train(planted({"33x8192x2048"}, kind, swap_factor, std::size_t(per_shape)), LearnedModel{},
                        TrainOptions{}, kind)
        .save(dir / (kind + ".json"));
  };
  const auto keep = [](const char* name) {
    const char* v = std::getenv(name);
    return std::make_pair(std::string(name), v ? std::optional<std::string>(v) : std::nullopt);
  };
  const auto saved = {keep("TESSERA_COST_MODEL_DIR"), keep("TESSERA_CACHE_DIR")};
  ::setenv("TESSERA_COST_MODEL_DIR", dir.c_str(), 1);
  ::setenv("TESSERA_CACHE_DIR", (dir / "cache").c_str(), 1);  // the cache's models come first: none there
  train(kEveryKind, 24);
  train("h100", 20);
  const LearnedModel pooled = model_for_device("h200");
  EXPECT_EQ(device_model_path("h200"), dir / "all.json");
  EXPECT_EQ(pooled.device_kind(), kEveryKind) << "no h200 model: the pooled one";
  // Listed folder by folder, a name once: this folder's all.json hides the shipped one.
  const auto listed = stored_models();
  const auto at = [&](const std::filesystem::path& p) { return std::find(listed.begin(), listed.end(), p) - listed.begin(); };
  ASSERT_LT(std::size_t(at(dir / "all.json")), listed.size());
  ASSERT_LT(std::size_t(at(dir / "h100.json")), listed.size());
  const auto shipped = std::filesystem::path(TESSERA_SOURCE_DIR) / "datasets" / "cost_models";
  EXPECT_EQ(std::size_t(at(shipped / "all.json")), listed.size()) << "hidden by the folder read before it";
  ASSERT_LT(std::size_t(at(shipped / "h200.json")), listed.size());
  EXPECT_LT(at(dir / "h100.json"), at(shipped / "h200.json"));
  EXPECT_EQ(pooled.rows(), 24);
  EXPECT_EQ(model_for_device("h100").device_kind(), "h100") << "a kind's own model first";
  train("h200", 16);
  EXPECT_EQ(model_for_device("h200").device_kind(), "h200");
  for (const auto& [name, value] : saved)
    if (value) ::setenv(name.c_str(), value->c_str(), 1); else ::unsetenv(name.c_str());
  std::filesystem::remove_all(dir);
}

// A stored model is read once per process while its file keeps its size and
// time: overwritten with bytes that are no model, its size and time put back,
// it still gives the model read before; touched, it is read again.
TEST(LearnedModel, AStoredModelIsReadOncePerFile) {
  REQUIRE_XGBOOST();
  const auto dir = std::filesystem::temp_directory_path() / "tessera_model_read_once_test";
  std::filesystem::remove_all(dir);
  const auto file = dir / "h200.json";
  LearnedModel::train(planted({"33x8192x2048"}, "h200", swap_factor, 16), LearnedModel{}, TrainOptions{}, "h200")
      .save(file);
  const LearnedModel first = load_stored_model(file);
  EXPECT_EQ(first.rows(), 16);
  const auto size = std::filesystem::file_size(file);
  const auto written = std::filesystem::last_write_time(file);
  std::ofstream(file, std::ios::trunc) << std::string(size, ' ');
  std::filesystem::last_write_time(file, written);
  EXPECT_EQ(load_stored_model(file).describe(), first.describe());
  EXPECT_THROW(LearnedModel::load(file), Error);
  std::filesystem::last_write_time(file, written + std::chrono::seconds(1));
  EXPECT_THROW(load_stored_model(file), Error);
  std::filesystem::remove_all(dir);
}

TEST(LearnedModel, AForeignFileIsBadInput) {
  REQUIRE_XGBOOST();
  EXPECT_THROW(LearnedModel::from_json(nlohmann::json{{"schema", "something else"}}), Error);
  EXPECT_THROW(LearnedModel::from_json(nlohmann::json{{"schema", "tessera.cost_model/1"}, {"features", {"a"}}}), Error);
  // A layer of a role this build does not know (a newer model file) is refused, not read as another.
  auto j = LearnedModel::train(planted({"33x8192x2048"}, "h200", swap_factor, 8), LearnedModel{}, TrainOptions{}, "h200")
               .to_json();
  j["layers"][0]["role"] = 7;
  EXPECT_THROW(LearnedModel::from_json(j), Error);
}

TEST(LearnedModel, MeasurementsRoundTripThroughJson) {
  Measurement m{task_from_shape("33x4608x3584"), rank_configs(task_from_shape("33x4608x3584"), Limits{}, 1).front().config,
                Limits{}, "h200", 12.5};
  m.limits.sm_count = 132;
  const Measurement back = measurement_from_json(to_json(m));
  EXPECT_EQ(back.task.id(), m.task.id());
  EXPECT_EQ(name(back.config), name(m.config));
  EXPECT_EQ(back.limits.sm_count, 132);
  EXPECT_EQ(back.device_kind, "h200");
  EXPECT_DOUBLE_EQ(back.cold_us, 12.5);
  EXPECT_THROW(measurement_from_json(nlohmann::json{{"task", "x"}}), Error);
}

// A Hopper row recorded before the kind's peak (its process's measured
// ceiling, 665-806 TFLOP/s on one H200) is read at the kind's peak, as the GPU
// ranks today: eval and features then judge a shape's rows at one peak.
TEST(LearnedModel, AHopperRowIsReadAtItsKindsPeak) {
  const Task t = task_from_shape("33x4608x3584");
  Measurement m{t, rank_configs(t, Limits{}, 1).front().config, Limits{}, "h200", 12.5};
  m.limits.peak_tflops = 671;
  EXPECT_DOUBLE_EQ(measurement_from_json(to_json(m)).limits.peak_tflops, kH200PeakTflops);
  m.limits.sm_count = 114, m.limits.sm_clock_mhz = 1755;
  EXPECT_NEAR(measurement_from_json(to_json(m)).limits.peak_tflops, kH200PeakTflops * 114 / 132 * 1755 / 1980, 1e-9);
  // Off Hopper the row's own: no constant of the kind is known.
  Measurement a{t, rank_configs(t, Limits{"sm_80", 100 * 1024}, 1).front().config, Limits{"sm_80", 100 * 1024}, "a100", 20};
  a.limits.peak_tflops = 280;
  EXPECT_DOUBLE_EQ(measurement_from_json(to_json(a)).limits.peak_tflops, 280);
}

}  // namespace
}  // namespace tessera::tile
