// EnvConfig and ActionSpace from JSON: strict, defaults kept, round trip; the
// task draw is deterministic under a seed.
#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "env/env.hpp"
#include "core/error.hpp"

namespace tessera::env {
namespace {

TEST(EnvConfig, DefaultsAreTheHonestProtocolAndTheSafeActionSpace) {
  const EnvConfig c;
  EXPECT_EQ(c.max_turns, kDefaultMaxTurns);
  EXPECT_FALSE(c.reuse_baselines);
  EXPECT_FALSE(c.actions.translation_unit);
  EXPECT_TRUE(c.actions.device_only && c.actions.diff && c.actions.tile_config);
  EXPECT_EQ(c.infra_retries, kDefaultInfraRetries);
  EXPECT_TRUE(c.eval.baselines);
  EXPECT_FALSE(c.eval.hot);
}

TEST(EnvConfig, FromJsonSetsWhatItNamesAndKeepsTheRest) {
  const auto c = EnvConfig::from_json(nlohmann::json::parse(R"({
    "max_turns": 5, "infra_retries": 0, "reuse_baselines": true, "counters_in_feedback": false,
    "actions": {"tile_config": false}, "reward": {"shape": "linear", "clip": 2.0},
    "eval": {"compile_only": true, "verify_trials": 2, "counter_set": "full"},
    "tasks": ["256x512x1024", {"op": "hgemm", "m": 64, "n": 64, "k": 64, "layout": "NN"}]})"));
  EXPECT_EQ(c.max_turns, 5);
  EXPECT_EQ(c.infra_retries, 0);
  EXPECT_TRUE(c.reuse_baselines);
  EXPECT_FALSE(c.counters_in_feedback);
  EXPECT_FALSE(c.actions.tile_config);
  EXPECT_TRUE(c.actions.diff);
  EXPECT_EQ(c.reward.shape, RewardShape::linear);
  EXPECT_DOUBLE_EQ(c.reward.clip, 2.0);
  EXPECT_TRUE(c.eval.compile_only);
  EXPECT_EQ(c.eval.verify_trials, 2);
  EXPECT_EQ(c.eval.counter_set, "full");
  ASSERT_EQ(c.tasks.size(), 2u);
  EXPECT_EQ(c.tasks[0].shape(), "256x512x1024");
  EXPECT_EQ(c.tasks[1].layout, Layout::NN);
  // Round trip.
  const auto again = EnvConfig::from_json(c.to_json());
  EXPECT_EQ(again.to_json(), c.to_json());
}

TEST(EnvConfig, BadSettingsAreClearErrors) {
  const auto error_of = [](const char* text) {
    try {
      EnvConfig::from_json(nlohmann::json::parse(text));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::bad_input);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(R"({"max_turn": 3})").find("unknown environment setting 'max_turn'"), std::string::npos);
  EXPECT_NE(error_of(R"({"max_turns": 0})").find("max_turns must be in"), std::string::npos);
  EXPECT_NE(error_of(R"({"max_turns": "3"})").find("must be an integer"), std::string::npos);
  EXPECT_NE(error_of(R"({"actions": {"cuda": true}})").find("unknown action kind 'cuda'"), std::string::npos);
  EXPECT_NE(error_of(R"({"actions": {"device_only": false, "diff": false, "tile_config": false}})").find("allows nothing"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"eval": {"counters": false}})").find("counters_in_feedback"), std::string::npos);
  EXPECT_NE(error_of(R"({"eval": {"counter_set": "most"}})").find("most"), std::string::npos);
  EXPECT_NE(error_of(R"({"reward": {"shape": "cubic"}})").find("cubic"), std::string::npos);
  EXPECT_NE(error_of(R"({"tasks": ["12x"]})"), "no error");
  EXPECT_NE(error_of(R"({"tasks_file": "/nonexistent/tasks.json"})"), "no error");
  EXPECT_NE(error_of(R"([1, 2])").find("JSON object"), std::string::npos);
}

TEST(EnvConfig, TasksFromADatasetFile) {
  const auto c = EnvConfig::from_json({{"tasks_file", std::string(TESSERA_SOURCE_DIR) + "/datasets/small_grid.json"}});
  EXPECT_EQ(c.tasks.size(), 24u);
}

TEST(DrawTask, SameSeedSameTaskAndSeedsSpreadOverTheTasks) {
  std::vector<Task> tasks;
  for (int i = 1; i <= 8; ++i) tasks.push_back(task_from_shape(std::to_string(64 * i) + "x64x64"));
  std::set<std::string> seen;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    EXPECT_EQ(draw_task(tasks, seed).id(), draw_task(tasks, seed).id());
    seen.insert(draw_task(tasks, seed).id());
  }
  EXPECT_EQ(seen.size(), tasks.size());
  // Pinned (SplitMix64 of the seed, modulo the count, computed independently):
  // the draw is part of the contract, a seed names the same episode everywhere.
  EXPECT_EQ(draw_task(tasks, 0).m, 64 * 8);
  EXPECT_EQ(draw_task(tasks, 1).m, 64 * 2);
  EXPECT_EQ(draw_task(tasks, 42).m, 64 * 6);
  EXPECT_EQ(draw_task(tasks, 123).m, 64 * 4);
  EXPECT_THROW(draw_task({}, 1), Error);
}

}  // namespace
}  // namespace tessera::env
