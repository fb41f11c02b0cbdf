// Task files in datasets/ and their loader.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "engine_helpers.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/tasks_file.hpp"

namespace tessera::search::testing {
namespace {

namespace fs = std::filesystem;

TEST(TasksFile, ShippedDatasetsLoad) {
  const fs::path root(TESSERA_SOURCE_DIR);
  const auto def = load_tasks_file(root / "datasets" / "default.json");
  ASSERT_EQ(def.size(), 1u);
  EXPECT_EQ(def[0].id(), "hgemm_4096x4096x4096_TN_none");
  const auto small = load_tasks_file(root / "datasets" / "small_grid.json");
  EXPECT_GE(small.size(), 24u);
  const std::vector<long long> grid{64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384};
  for (const auto& t : small) {
    for (long long d : {t.m, t.n, t.k}) EXPECT_NE(std::find(grid.begin(), grid.end(), d), grid.end()) << t.id();
    EXPECT_LE(t.flops(), 1073741824.0) << t.id();
  }
  EXPECT_EQ(load_tasks_file(root / "datasets" / "acceptance.json").size(), 3u);
}

// The held-out LLM set is held out by weight: no N x K of it is a weight of
// the main LLM set or of the shapes the shipped cost model was trained on.
TEST(TasksFile, HeldOutLlmSetSharesNoWeightWithWhatTheModelSaw) {
  const fs::path root(TESSERA_SOURCE_DIR);
  std::set<std::pair<long long, long long>> seen;
  for (const char* f : {"llm_shapes.json", "grid1000_model_train.json"})
    for (const auto& t : load_tasks_file(root / "datasets" / f)) seen.insert({t.n, t.k});
  const auto held = load_tasks_file(root / "datasets" / "llm_shapes_heldout.json");
  EXPECT_GE(held.size(), 60u);
  for (const auto& t : held) EXPECT_FALSE(seen.count({t.n, t.k})) << t.id() << ": a weight the model was trained on";
}

// The second held-out LLM set shares no weight with either LLM set, the
// model's training shapes or the held-out grid: none of the H200 rows kept in
// datasets/cost_rows came from a family of it.
TEST(TasksFile, SecondHeldOutLlmSetSharesNoWeightWithAnySweptSet) {
  const fs::path root(TESSERA_SOURCE_DIR);
  std::set<std::pair<long long, long long>> seen;
  for (const char* f : {"llm_shapes.json", "llm_shapes_heldout.json", "grid1000_model_train.json", "grid1000_heldout100.json"})
    for (const auto& t : load_tasks_file(root / "datasets" / f)) seen.insert({t.n, t.k});
  const auto held = load_tasks_file(root / "datasets" / "llm_shapes_heldout2.json");
  EXPECT_GE(held.size(), 60u);
  for (const auto& t : held) EXPECT_FALSE(seen.count({t.n, t.k})) << t.id() << ": a weight already swept";
}

// The unseen grid sample shares no family with the sets the sweeps before it
// measured or the models before 2026-12-03 trained on: it was the grid's
// held-out set for the H200 model, which had learned grid1000_heldout100.json's
// families. (The H200 model shipped on 2026-12-03 learned the sample's own rows
// too: for it llm_shapes_heldout2.json and llm_shapes_heldout3.json stay held
// out, which LearnedModel.TheShippedH200ModelNeverLearnedItsHeldOutLayers guards.)
TEST(TasksFile, UnseenGridSampleSharesNoFamilyWithAnySweptSet) {
  const fs::path root(TESSERA_SOURCE_DIR);
  std::set<std::pair<long long, long long>> seen;
  for (const char* f : {"llm_shapes.json", "llm_shapes_heldout.json", "llm_shapes_heldout2.json",
                        "grid1000_model_train.json", "grid1000_heldout100.json"})
    for (const auto& t : load_tasks_file(root / "datasets" / f)) seen.insert({t.n, t.k});
  const auto held = load_tasks_file(root / "datasets" / "grid1000_unseen100.json");
  EXPECT_EQ(held.size(), 100u);
  std::set<std::string> buckets;
  for (const auto& t : held) {
    EXPECT_FALSE(seen.count({t.n, t.k})) << t.id() << ": a family already swept";
    buckets.insert(t.flops() <= 1073741824.0 ? "small" : t.flops() <= 68719476736.0 ? "medium" : "large");
  }
  EXPECT_EQ(buckets.size(), 3u) << "every bucket";
}

TEST(TasksFile, AcceptsArraysAndShapeStringsAndRejectsMistakes) {
  const auto dir = fresh_dir("tasks_files");
  atomic_write_file(dir / "a.json", R"(["256x256x256", {"op":"hgemm","m":64,"n":64,"k":64,"layout":"NN"}])");
  const auto t = load_tasks_file(dir / "a.json");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].layout, Layout::NN);
  for (const char* bad : {R"({"tasks": []})", R"(["256x256x256", "256x256x256"])", R"({"tasks": [{"m": 1}]})",
                          R"({"name": "x"})", "not json", R"(["12x"])"}) {
    atomic_write_file(dir / "bad.json", bad);
    EXPECT_THROW(load_tasks_file(dir / "bad.json"), Error) << bad;
  }
  EXPECT_THROW(load_tasks_file(dir / "missing.json"), Error);
}

}  // namespace
}  // namespace tessera::search::testing
