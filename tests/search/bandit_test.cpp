// Bandit rules and resource masking.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "search/bandit.hpp"

namespace tessera::search {
namespace {

TEST(Ucb1, PicksTheUntriedOpenArmFirst) {
  Ucb1Rule ucb;
  Rng r(1);
  std::vector<ArmStats> arms(3);
  arms[0].add(1.0, 0);
  EXPECT_EQ(ucb.choose(arms, {true, true, true}, false, r), 1u);
  EXPECT_EQ(ucb.choose(arms, {true, false, true}, false, r), 2u);
}

TEST(Ucb1, ExploitsTheBetterArmAndStillExplores) {
  Ucb1Rule ucb;
  Rng r(1);
  std::vector<ArmStats> arms(2);
  const double p[2] = {0.2, 0.7};
  Rng env(3);
  std::vector<int> pulls(2);
  for (int t = 0; t < 400; ++t) {
    const auto a = ucb.choose(arms, {true, true}, false, r);
    ++pulls[a];
    arms[a].add(env.bernoulli(p[a]) ? 1.0 : 0.0, 0);
  }
  EXPECT_GT(pulls[1], 3 * pulls[0]);
  EXPECT_GT(pulls[0], 5);
}

TEST(Thompson, IsDeterministicForAFixedSeedAndLearns) {
  ThompsonRule ts;
  std::vector<ArmStats> arms(3);
  arms[0].add(0.1, 0);
  arms[1].add(0.9, 0);
  std::vector<std::size_t> a, b;
  for (int s = 0; s < 50; ++s) {
    Rng r1 = Rng::derive(11, s, "arm"), r2 = Rng::derive(11, s, "arm");
    a.push_back(ts.choose(arms, {true, true, true}, false, r1));
    b.push_back(ts.choose(arms, {true, true, true}, false, r2));
  }
  EXPECT_EQ(a, b);
  for (int i = 0; i < 40; ++i) {
    arms[1].add(1.0, 0);
    arms[0].add(0.0, 0);
    arms[2].add(0.0, 0);
  }
  int wins = 0;
  for (int s = 0; s < 100; ++s) {
    Rng r = Rng::derive(12, s, "arm");
    wins += ts.choose(arms, {true, true, true}, false, r) == 1;
  }
  EXPECT_GE(wins, 95);
  Rng r(1);
  for (int s = 0; s < 50; ++s) EXPECT_EQ(ts.choose(arms, {false, false, true}, false, r), 2u);
}

TEST(Bandit, CostAwareRulePrefersCheaperArmsWithEqualRewards) {
  Ucb1Rule ucb(0.0);  // no exploration bonus: pure value
  Rng r(1);
  std::vector<ArmStats> arms(2);
  for (int i = 0; i < 10; ++i) {
    arms[0].add(0.5, 10.0);
    arms[1].add(0.5, 1.0);
  }
  EXPECT_EQ(ucb.choose(arms, {true, true}, true, r), 1u);
  arms[0].add(0.5, 0);  // tie-break and plain value: arm 0 has the higher mean now
  arms[0].reward_sum += 2;
  EXPECT_EQ(ucb.choose(arms, {true, true}, false, r), 0u);
}

TEST(Masking, ClosesSaturatedResourcesButNeverEveryArm) {
  const std::vector<std::string> targets{"tensor", "memory", "latency", "none"};
  auto open = mask_saturated(targets, {{"tensor_pipe_pct", 92.0}, {"dram_throughput_pct", 40.0}}, 85);
  EXPECT_EQ(open, (std::vector<bool>{false, true, true, true}));
  open = mask_saturated(targets, {{"error", "no counters"}}, 85);
  EXPECT_EQ(open, (std::vector<bool>(4, true)));
  // Every resource saturated and no "none" arm: all stay open.
  open = mask_saturated({"tensor", "memory"}, {{"tensor_pipe_pct", 99.0}, {"dram_throughput_pct", 99.0}}, 85);
  EXPECT_EQ(open, (std::vector<bool>{true, true}));
  EXPECT_EQ(counter_for_resource("memory"), "dram_throughput_pct");
  EXPECT_EQ(counter_for_resource("tensor_pipe"), "tensor_pipe_pct");
  EXPECT_EQ(counter_for_resource("l2_locality"), "");
  // The agent's vocabulary: the LLM arms mask too.
  open = mask_saturated({"tensor_pipe", "l2_locality"}, {{"tensor_pipe_pct", 95.0}}, 85);
  EXPECT_EQ(open, (std::vector<bool>{false, true}));
  // The fast counter set has no sm_throughput_pct: issue-slot use masks the latency arms.
  open = mask_saturated({"latency", "memory"}, {{"issue_active_pct", 90.0}, {"dram_throughput_pct", 10.0}}, 85);
  EXPECT_EQ(open, (std::vector<bool>{false, true}));
  open = mask_saturated({"latency", "memory"}, {{"issue_active_pct", 50.0}}, 85);
  EXPECT_EQ(open, (std::vector<bool>{true, true}));
}

TEST(Bandit, FactoryRejectsUnknownRules) {
  EXPECT_EQ(make_bandit_rule("thompson")->name(), "thompson");
  EXPECT_EQ(make_bandit_rule("ucb1")->name(), "ucb1");
  EXPECT_THROW(make_bandit_rule("greedy"), Error);
}

}  // namespace
}  // namespace tessera::search
