// The cold timer's rules without a GPU (worker/timing_rules.hpp): each test
// plants one way the machine can fail a timing and checks what the timer
// makes of it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "worker/timing_rules.hpp"

namespace tessera::worker {
namespace {

constexpr float kBoostGhz = 1.98f;   // H200 boost SM clock
constexpr float kCappedGhz = 1.755f; // the same GPU power-capped under a 16384^3 GEMM

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Issue 39's 16384^3 record. One batch: the candidate (call 0) interleaved
// with two baselines, 57 rounds; the candidate's checked calls (one round in
// eight) are followed by a second-long fp64 reference, during which the GPU
// leaves its power cap, so the next sample (always the first baseline's)
// reads the boost clock. Every other sample runs power-capped.
TEST(TimingRules, PowerCappedCandidateKeepsItsSamplesAt16384Cubed) {
  std::vector<int> call_of;
  std::vector<double> times;
  std::vector<float> clocks;
  constexpr int kRounds = 57;
  for (int round = 0; round < kRounds; ++round) {
    const bool after_check = round > 0 && (round - 1) % 8 == 0;
    for (int call = 0; call < 3; ++call) {
      call_of.push_back(call);
      times.push_back(call == 0 ? 11567.0 : 10400.0);
      clocks.push_back(call == 1 && after_check ? kBoostGhz : kCappedGhz);
    }
  }
  // The old rule compared each sample with the batch's fastest clock: every
  // candidate sample was below 97% of it, so all were discarded, and with one
  // batch past the 2 s budget the cold timing ended with none.
  ASSERT_LT(kCappedGhz, 0.97f * kBoostGhz);
  std::vector<SampleSet> sets(3);
  sort_batch(call_of, times, clocks, TimingOptions{}.throttle_fraction, sets);
  EXPECT_FLOAT_EQ(reference_clock(clocks), kCappedGhz);
  EXPECT_EQ(sets[0].kept_us.size(), std::size_t(kRounds)) << "sustained power capping is part of the measurement";
  EXPECT_EQ(sets[0].throttled, 0);
  const TimingStats t = cold_stats(sets[0], "cupti_activity", TimingOptions{}, kBoostGhz, 9120);
  EXPECT_EQ(t.status, "measured");
  EXPECT_DOUBLE_EQ(t.median_us, 11567.0);
  EXPECT_NEAR(t.sm_clock_ghz, kCappedGhz, 1e-6);
}

TEST(TimingRules, TransientDipsAreStillDiscarded) {
  std::vector<int> call_of(20, 0);
  std::vector<double> times(20, 5.0);
  std::vector<float> clocks(20, kBoostGhz);
  clocks[3] = clocks[11] = 1.5f;
  times[3] = times[11] = 6.5;
  std::vector<SampleSet> sets(1);
  sort_batch(call_of, times, clocks, 0.97, sets);
  EXPECT_EQ(sets[0].throttled, 2);
  EXPECT_EQ(sets[0].kept_us.size(), 18u);
}

TEST(TimingRules, LostRecordsAreCountedApart) {
  std::vector<SampleSet> sets(2);
  sort_batch({0, 1, 0, 1}, {std::nan(""), 3.0, std::nan(""), 3.1}, {kBoostGhz, kBoostGhz, kBoostGhz, kBoostGhz}, 0.97,
             sets);
  EXPECT_EQ(sets[0].lost, 2);
  EXPECT_TRUE(sets[0].kept_us.empty());
  EXPECT_EQ(sets[1].kept_us.size(), 2u);
}

TEST(TimingRules, EverySampleThrottledFailsWithTheReason) {
  SampleSet s;
  s.throttled = 57;
  const TimingStats t = cold_stats(s, "cupti_activity", TimingOptions{}, kBoostGhz, 9120);
  EXPECT_EQ(t.status, "failed");
  EXPECT_TRUE(has(t.reason, "every sample (57) was discarded as throttled")) << t.reason;
  EXPECT_EQ(t.discarded_throttled, 57);
}

TEST(TimingRules, EveryRecordLostFailsWithTheReason) {
  SampleSet s;
  s.lost = 40;
  const TimingStats t = cold_stats(s, "cupti_activity", TimingOptions{}, kBoostGhz, 2100);
  EXPECT_EQ(t.status, "failed");
  EXPECT_TRUE(has(t.reason, "activity records of every sample (40) were lost")) << t.reason;
}

TEST(TimingRules, NoSampleWithinTheBudgetFailsWithTheReason) {
  const TimingStats t = cold_stats(SampleSet{}, "cupti_activity", TimingOptions{}, kBoostGhz, 30500);
  EXPECT_EQ(t.status, "failed");
  EXPECT_TRUE(has(t.reason, "within the 30000 ms budget")) << t.reason;
}

TEST(TimingRules, ClocksBelowTheFloorFailWithTheReason) {
  SampleSet s;
  s.kept_us = {20.0, 21.0, 20.5};
  s.kept_clock_ghz = {0.70f, 0.71f, 0.69f};
  const TimingStats t = cold_stats(s, "cupti_activity", TimingOptions{}, kBoostGhz, 25);
  EXPECT_EQ(t.status, "failed");
  EXPECT_TRUE(has(t.reason, "below 50% of the 1.980 GHz this GPU ran at earlier")) << t.reason;
  EXPECT_EQ(t.samples, 3) << "the figures stay as evidence";
  // Before any clock was seen there is no floor.
  EXPECT_EQ(cold_stats(s, "cupti_activity", TimingOptions{}, 0, 25).status, "measured");
}

TEST(TimingRules, TheBudgetWaitsForASampleOfEveryCallable) {
  const TimingOptions o;
  std::vector<SampleSet> sets(2);
  sets[1].kept_us = {10, 11};
  sets[0].throttled = 57;
  std::vector<TimingStats> stats = {summarize(sets[0].kept_us, "m"), summarize(sets[1].kept_us, "m")};
  EXPECT_FALSE(cold_should_stop(stats, sets, o, 9120, 1, true, false))
      << "one batch past the 2 s budget without a candidate sample must not end the timing";
  EXPECT_TRUE(cold_should_stop(stats, sets, o, o.hard_timeout_ms, 4, true, false)) << "the hard budget ends it";
  sets[0].kept_us = {11567};
  stats[0] = summarize(sets[0].kept_us, "m");
  EXPECT_TRUE(cold_should_stop(stats, sets, o, 9120, 1, true, false));
  EXPECT_TRUE(cold_should_stop(stats, sets, o, 1, 1, true, true)) << "a failed check ends it at once";
}

TEST(TimingRules, ConvergedGuardedTimingRunsTwoBatches) {
  const TimingOptions o;
  std::vector<SampleSet> sets(1);
  sets[0].kept_us.assign(40, 5.0);
  const std::vector<TimingStats> stats = {summarize(sets[0].kept_us, "m")};
  EXPECT_FALSE(cold_should_stop(stats, sets, o, 30, 1, true, false));
  EXPECT_TRUE(cold_should_stop(stats, sets, o, 30, 2, true, false));
  EXPECT_TRUE(cold_should_stop(stats, sets, o, 30, 1, false, false));
}

TEST(TimingRules, AnEmptySampleSetIsAFailureWithAReason) {
  const TimingStats t = summarize({}, "cupti_activity");
  EXPECT_EQ(t.status, "failed");
  EXPECT_FALSE(t.reason.empty());
}

GuardedTiming timing_with(const std::vector<std::string>& statuses) {
  GuardedTiming t;
  for (const auto& s : statuses) {
    TimingStats st;
    st.status = s;
    if (s == "failed") st.reason = "every sample (9) was discarded as throttled";
    else st.median_us = 10;
    t.stats.push_back(st);
  }
  t.guarded_calls = 40;
  t.checked_calls = 5;
  return t;
}

TEST(TimingRules, AMachineFailureIsRetriedAndAnOkRetryIsKept) {
  int calls = 0;
  const GuardedTiming t = retry_machine_failures(
      [&](int attempt) {
        ++calls;
        return timing_with({attempt == 1 ? "failed" : "measured", "measured"});
      },
      kColdTimingAttempts);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(t.stats[0].status, "measured");
  EXPECT_EQ(t.guarded_calls, 80) << "every attempt's guarded calls count";
  EXPECT_EQ(t.checked_calls, 10);
}

TEST(TimingRules, AFailureOnEveryAttemptNamesEachAttempt) {
  const GuardedTiming t =
      retry_machine_failures([&](int) { return timing_with({"measured", "failed"}); }, kColdTimingAttempts);
  EXPECT_TRUE(machine_failed(t));
  EXPECT_EQ(t.stats[0].status, "measured");
  EXPECT_EQ(t.stats[1].status, "failed");
  EXPECT_TRUE(has(t.stats[1].reason, "2 attempts failed: attempt 1: every sample (9)")) << t.stats[1].reason;
  EXPECT_TRUE(has(t.stats[1].reason, "; attempt 2: every sample (9)")) << t.stats[1].reason;
}

TEST(TimingRules, AFailedCheckIsTheCandidatesAndNeverRetried) {
  int calls = 0;
  const GuardedTiming t = retry_machine_failures(
      [&](int) {
        ++calls;
        GuardedTiming g = timing_with({"failed"});
        g.violation = "12 output elements of checked timed calls were never written";
        return g;
      },
      kColdTimingAttempts);
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(machine_failed(t));
  EXPECT_FALSE(t.violation.empty());
}

}  // namespace
}  // namespace tessera::worker
