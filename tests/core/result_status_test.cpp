// settle_status: the one function that decides a result's final status from
// its stages. Each test plants one stage's outcome.
#include <gtest/gtest.h>

#include "core/result_status.hpp"

namespace tessera {
namespace {

TimingStats measured(double median_us) {
  TimingStats t;
  t.status = "measured";
  t.samples = 40;
  t.median_us = median_us;
  t.sm_clock_ghz = 1.755;
  t.elapsed_ms = 25;
  return t;
}

// A result as the worker leaves it after every stage ran: ok, verified, timed.
EvalResult timed_ok() {
  EvalResult r;
  r.status = Status::ok;
  r.reason = "";
  r.verify.status = "passed";
  r.cold = measured(11567);
  r.hot = measured(11000);
  r.baselines = {{"cublas_tn", "algo 0", measured(10400), ""}, {"cublaslt_heuristic", "", {}, "no fused epilogue"}};
  r.best_baseline = "cublas_tn";
  r.best_baseline_us = 10400;
  r.speedup = 10400.0 / 11567.0;
  r.tflops = 760;
  r.peak_fraction = 0.9;
  return r;
}

TEST(SettleStatus, AFullyMeasuredResultStaysOk) {
  EvalResult r = timed_ok();
  settle_status(r, StagePlan{});
  EXPECT_EQ(r.status, Status::ok);
  EXPECT_GT(r.speedup, 0);
  EXPECT_TRUE(r.fault.empty());
}

// The 16384^3 record of issue 39: ok, verified, cold failed with no reason.
TEST(SettleStatus, OkWithAFailedColdTimingAndNoReasonIsAnInfraError) {
  EvalResult r = timed_ok();
  r.cold = TimingStats{};
  r.cold.status = "failed";
  r.cold.discarded_throttled = 57;
  r.cold.elapsed_ms = 9120;
  r.speedup = 0;
  settle_status(r, StagePlan{});
  EXPECT_EQ(r.status, Status::infra_error);
  EXPECT_EQ(r.fault, "infrastructure");
  EXPECT_NE(r.reason.find("ranking figure was not measured"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("without giving a reason"), std::string::npos) << r.reason;
  EXPECT_FALSE(r.cold.reason.empty()) << "a failed stage always carries a reason";
  EXPECT_NE(r.fault_evidence.find("57 discarded as throttled"), std::string::npos) << r.fault_evidence;
  EXPECT_EQ(r.speedup, 0);
  EXPECT_EQ(r.tflops, 0);
  EXPECT_EQ(r.peak_fraction, 0);
}

TEST(SettleStatus, EachMachineFailureOfTheColdTimingIsMaskedWithItsEvidence) {
  for (const std::string why :
       {"2 attempts failed: attempt 1: every sample was discarded as throttled",
        "the SM clock ran at 0.702 GHz, below 50% of the 1.980 GHz this GPU ran at earlier",
        "no sample kept within the 30000 ms budget", "the activity records of every sample were lost"}) {
    EvalResult r = timed_ok();
    r.cold.status = "failed";
    r.cold.reason = why;
    settle_status(r, StagePlan{});
    EXPECT_EQ(r.status, Status::infra_error) << why;
    EXPECT_NE(r.reason.find(why), std::string::npos) << r.reason;
    EXPECT_NE(r.fault_evidence.find(why), std::string::npos) << r.fault_evidence;
  }
}

TEST(SettleStatus, OkNeedsAPositiveMeasuredMedian) {
  EvalResult r = timed_ok();
  r.cold.median_us = 0;
  settle_status(r, StagePlan{});
  EXPECT_EQ(r.status, Status::infra_error);
}

TEST(SettleStatus, AFailedBaselineTimingIsTheMachinesFailure) {
  EvalResult r = timed_ok();
  r.baselines[0].cold.status = "failed";
  r.baselines[0].cold.reason = "every sample was discarded as throttled";
  settle_status(r, StagePlan{});
  EXPECT_EQ(r.status, Status::infra_error);
  EXPECT_NE(r.reason.find("cublas_tn"), std::string::npos) << r.reason;
  // A baseline that was never timed (not runnable here) is no failure.
  EvalResult untimed = timed_ok();
  untimed.baselines.push_back({"cublas_nn", "", TimingStats{}, ""});
  settle_status(untimed, StagePlan{});
  EXPECT_EQ(untimed.status, Status::ok);
  // Without baselines asked for, the candidate's own time is enough.
  EvalResult again = timed_ok();
  again.baselines[0].cold.status = "failed";
  settle_status(again, StagePlan{true, false});
  EXPECT_EQ(again.status, Status::ok);
}

TEST(SettleStatus, OkWithoutAPassedVerificationIsNeverOk) {
  EvalResult r = timed_ok();
  r.verify.status = "skipped";
  settle_status(r, StagePlan{});
  EXPECT_EQ(r.status, Status::infra_error);
}

TEST(SettleStatus, TimingNotAskedForNeedsNoColdTime) {
  EvalResult r;
  r.status = Status::ok;
  r.reason = "verified; timing not requested";
  r.verify.status = "passed";
  settle_status(r, StagePlan{false, false});
  EXPECT_EQ(r.status, Status::ok);
}

TEST(SettleStatus, AFailedHotTimingGetsAReasonButHotIsNotTheRankingFigure) {
  EvalResult r = timed_ok();
  r.hot = TimingStats{};
  r.hot.status = "failed";
  settle_status(r, StagePlan{});
  EXPECT_EQ(r.status, Status::ok);
  EXPECT_FALSE(r.hot.reason.empty());
}

TEST(SettleStatus, ACandidatesFailureKeepsItsStatusAndLosesItsFigures) {
  EvalResult r = timed_ok();
  r.status = Status::wrong_answer;
  r.reason = "12 output elements of checked timed calls were never written";
  settle_status(r, StagePlan{});
  EXPECT_EQ(r.status, Status::wrong_answer);
  EXPECT_EQ(r.reason, "12 output elements of checked timed calls were never written");
  EXPECT_EQ(r.speedup, 0);
  EvalResult silent = timed_ok();
  silent.status = Status::launch_error;
  silent.reason.clear();
  settle_status(silent, StagePlan{});
  EXPECT_FALSE(silent.reason.empty());
}

TEST(SettleStatus, DescribeTimingNamesEveryFigure) {
  TimingStats t = measured(12.5);
  t.discarded_throttled = 3;
  t.discarded_other = 1;
  const std::string d = describe_timing(t);
  EXPECT_NE(d.find("40 samples kept"), std::string::npos) << d;
  EXPECT_NE(d.find("3 discarded as throttled"), std::string::npos) << d;
  EXPECT_NE(d.find("1 with lost records"), std::string::npos) << d;
  EXPECT_NE(d.find("1.755 GHz"), std::string::npos) << d;
}

}  // namespace
}  // namespace tessera
