// score_actions: many actions at once, across the pool, in request order.
#include <cmath>

#include <gtest/gtest.h>

#include "env/score.hpp"
#include "core/error.hpp"
#include "tests/env/fake_evaluator.hpp"

namespace tessera::env {
namespace {

using testing::fake_kernel;

TEST(ScoreActions, MixedBatchInRequestOrderOverSeveralEvaluators) {
  auto log = std::make_shared<testing::FakeLog>();
  auto pool = testing::scripted_pool(log, 3);
  const Task t = task_from_shape("2048x2048x2048");
  std::vector<ScoreRequest> reqs;
  for (int i = 1; i <= 6; ++i) reqs.push_back({fake_kernel("FAKE_SPEEDUP(" + std::to_string(0.5 * i) + ")"), t, {}});
  reqs.push_back({"no kernel here", t, {}});
  reqs.push_back({fake_kernel("FAKE_INFRA"), t, {}});
  reqs.push_back({"<<<<<<< SEARCH\n// X\n=======\n// FAKE_WRONG\n>>>>>>> REPLACE\n", t, fake_kernel("X")});
  EnvConfig c;
  c.infra_retries = 1;
  const auto out = score_actions(reqs, c, pool);
  ASSERT_EQ(out.size(), reqs.size());
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(out[i].reward.has_value()) << i;
    const double speedup = 0.5 * (i + 1);
    EXPECT_NEAR(*out[i].reward, 1.0 + std::clamp(std::log(speedup), -kDefaultPerformanceClip, kDefaultPerformanceClip), 1e-9);
    EXPECT_DOUBLE_EQ(out[i].info.at("result").at("speedup").get<double>(), speedup);
    EXPECT_EQ(out[i].info.at("task_id"), t.id());
  }
  EXPECT_DOUBLE_EQ(*out[6].reward, kDefaultFormatPenalty);
  EXPECT_EQ(out[6].info.at("format_ok"), false);
  EXPECT_FALSE(out[7].reward.has_value());
  EXPECT_EQ(out[7].info.at("masked"), true);
  EXPECT_EQ(out[7].info.at("attempts").size(), 2u);
  EXPECT_DOUBLE_EQ(*out[8].reward, kDefaultWrongPenalty);
  EXPECT_EQ(out[8].info.at("action_kind"), "diff");
  EXPECT_EQ(log->calls, 6 + 2 + 1);  // the format failure is never evaluated; the infra error twice
}

TEST(ScoreActions, EmptyBatchAndMissingPool) {
  auto pool = testing::scripted_pool(std::make_shared<testing::FakeLog>());
  EXPECT_TRUE(score_actions({}, EnvConfig{}, pool).empty());
  EXPECT_THROW(score_actions({}, EnvConfig{}, nullptr), Error);
}

}  // namespace
}  // namespace tessera::env
