// The shared reward (core/reward.hpp): gates, the performance term,
// penalties per class, masking, and its configuration file form.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "core/reward.hpp"

namespace tessera {
namespace {

EvalResult timed_result(double kernel_us, double baseline_us) {
  EvalResult r;
  r.status = Status::ok;
  r.cold.median_us = kernel_us;
  r.best_baseline_us = baseline_us;
  r.speedup = baseline_us / kernel_us;
  r.phase_ms["load"] = 1;
  return r;
}

EvalResult failed(Status s) {
  EvalResult r;
  r.status = s;
  return r;
}

double scalar(const EvalResult& r, const RewardConfig& c = default_reward_config()) {
  RewardInput in;
  in.result = &r;
  return compute_reward(in, c).scalar.value();
}

TEST(Reward, CorrectKernelEarnsBonusPlusLogSpeedup) {
  const auto r = timed_result(50, 100);  // 2x faster than the best baseline
  RewardInput in;
  in.result = &r;
  const Reward w = compute_reward(in, default_reward_config());
  ASSERT_TRUE(w.scalar.has_value());
  EXPECT_NEAR(*w.scalar, kDefaultCorrectBonus + std::log(2.0), 1e-12);
  EXPECT_FALSE(w.masked);
  EXPECT_EQ(w.components["class"], "ok");
  EXPECT_TRUE(w.components["correct"].get<bool>());
  EXPECT_TRUE(w.components["timed"].get<bool>());
  EXPECT_NEAR(w.components["speedup"].get<double>(), 2.0, 1e-12);
  EXPECT_NEAR(w.components["performance"].get<double>(), std::log(2.0), 1e-12);
}

TEST(Reward, SlowerThanBaselineIsBelowTheBonusAndClipped) {
  EXPECT_NEAR(scalar(timed_result(200, 100)), kDefaultCorrectBonus - std::log(2.0), 1e-12);
  // 10x faster earns no more than 3x; 10x slower loses no more than 3x.
  EXPECT_NEAR(scalar(timed_result(10, 100)), kDefaultCorrectBonus + std::log(3.0), 1e-12);
  EXPECT_NEAR(scalar(timed_result(1000, 100)), kDefaultCorrectBonus - std::log(3.0), 1e-12);
}

TEST(Reward, LinearShapeIsSpeedupMinusOne) {
  RewardConfig c = default_reward_config();
  c.shape = RewardShape::linear;
  c.clip = 2.0;
  EXPECT_NEAR(scalar(timed_result(50, 100), c), kDefaultCorrectBonus + 1.0, 1e-12);
  EXPECT_NEAR(scalar(timed_result(10, 100), c), kDefaultCorrectBonus + 2.0, 1e-12);  // 9.0 clipped
}

TEST(Reward, PenaltiesAreOrderedByHowFarTheKernelGot) {
  const double wrong = scalar(failed(Status::wrong_answer));
  const double crash = scalar(failed(Status::runtime_fault));
  const double compile = scalar(failed(Status::compile_error));
  const double cheat = scalar(failed(Status::rejected));
  RewardInput bad_format;
  bad_format.format_ok = false;
  const double format = compute_reward(bad_format, default_reward_config()).scalar.value();
  EXPECT_GT(wrong, crash);
  EXPECT_GT(crash, compile);
  EXPECT_GT(compile, format);
  EXPECT_LE(cheat, format);
  // Any correct kernel, however slow, beats any failure.
  EXPECT_GT(scalar(timed_result(1e6, 1)), wrong);
}

TEST(Reward, InfrastructureFailureIsMaskedNotScored) {
  const auto r = failed(Status::infra_error);
  RewardInput in;
  in.result = &r;
  const Reward w = compute_reward(in, default_reward_config());
  EXPECT_TRUE(w.masked);
  EXPECT_FALSE(w.scalar.has_value());
  EXPECT_TRUE(w.components["scalar"].is_null());
  EXPECT_TRUE(w.components["masked"].get<bool>());
}

TEST(Reward, FormatFailureNeverLooksAtAResult) {
  const auto r = timed_result(1, 100);  // must be ignored: the action was not a kernel
  RewardInput in;
  in.result = &r;
  in.format_ok = false;
  in.format_error = "no code block";
  const Reward w = compute_reward(in, default_reward_config());
  EXPECT_EQ(*w.scalar, kDefaultFormatPenalty);
  EXPECT_EQ(w.components["class"], "format");
  EXPECT_FALSE(w.components["compiled"].get<bool>());
  EXPECT_EQ(w.components["format_error"], "no code block");
}

TEST(Reward, GivenReferenceReplacesTheBaseline) {
  const auto r = timed_result(50, 400);  // 8x the baseline, but only 1.5x the reference
  RewardInput in;
  in.result = &r;
  in.use_reference = true;
  in.reference_us = 75;
  const Reward w = compute_reward(in, default_reward_config());
  EXPECT_NEAR(w.components["speedup"].get<double>(), 1.5, 1e-12);
  in.reference_us = 0;  // no reference: correct, but nothing to compare with
  EXPECT_NEAR(*compute_reward(in, default_reward_config()).scalar, kDefaultCorrectBonus, 1e-12);
}

TEST(Reward, CompileOnlyResultGetsTheCompiledReward) {
  RewardConfig c = default_reward_config();
  c.compiled_reward = 0.125;
  EXPECT_EQ(scalar(failed(Status::compiled), c), 0.125);
}

TEST(Reward, ConfigRoundTripsAndRejectsUnknownKeys) {
  RewardConfig c = default_reward_config();
  c.shape = RewardShape::linear;
  c.penalty["wrong_answer"] = -0.7;
  const RewardConfig back = RewardConfig::from_json(c.to_json());
  EXPECT_EQ(back.shape, RewardShape::linear);
  EXPECT_EQ(back.penalty.at("wrong_answer"), -0.7);
  EXPECT_THROW(RewardConfig::from_json({{"clipp", 2}}), Error);
  EXPECT_THROW(RewardConfig::from_json({{"clip", -1}}), Error);
  EXPECT_THROW(RewardConfig::from_json({{"shape", "cubic"}}), Error);
  EXPECT_THROW(RewardConfig::from_json({{"penalty", {{"timeout", "a lot"}}}}), Error);
}

}  // namespace
}  // namespace tessera
