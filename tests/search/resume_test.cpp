// Checkpoint and resume: a run stopped after k steps (abandoned in flight, or
// killed with SIGKILL) and resumed makes exactly the decisions of a run that
// was never interrupted, and loses no finished evaluation.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <ostream>
#include <thread>

#include "engine_helpers.hpp"
#include "core/error.hpp"

namespace tessera::search::testing {
namespace {

void expect_same_decisions(const std::filesystem::path& a, const std::filesystem::path& b) {
  const auto da = decisions(a), db = decisions(b);
  ASSERT_EQ(da.size(), db.size());
  for (std::size_t i = 0; i < da.size(); ++i) ASSERT_EQ(da[i], db[i]) << "step " << i;
}

struct ResumeCase {
  std::string method;
  int evaluators;
  double noisy_spread;
  long long halt_after;
  std::string rule = "ucb1";
};

// gtest prints a parameter it has no printer for byte by byte, padding
// included (valgrind: uninitialised reads at registration).
void PrintTo(const ResumeCase& c, std::ostream* os) {
  *os << c.method << "/" << c.rule << " evaluators " << c.evaluators << " halt after " << c.halt_after;
}

class HaltAndResume : public ::testing::TestWithParam<ResumeCase> {};

TEST_P(HaltAndResume, MakesTheSameDecisionsAsAnUninterruptedRun) {
  const ResumeCase c = GetParam();
  auto cfg = small_config(c.method, 28, 5);
  cfg.pipeline_depth = 2 * c.evaluators;
  cfg.bandit_rule = c.rule;
  const std::string name = c.method + c.rule + std::to_string(c.evaluators) + "_" + std::to_string(c.halt_after);
  const auto whole = fresh_dir(name + "_whole"), parts = fresh_dir(name + "_parts");
  FakeRun a;
  a.evaluators = c.evaluators;
  a.noisy_spread = c.noisy_spread;
  run_fake(cfg, whole, a);

  FakeRun b1 = a;
  b1.halt_after = c.halt_after;
  b1.delay_ms = 2;
  const auto s1 = run_fake(cfg, parts, b1);
  EXPECT_EQ(s1.stop_reason, "halted");
  EXPECT_EQ(records(parts).size(), std::size_t(c.halt_after));

  FakeRun b2 = a;
  const auto s2 = run_fake(cfg, parts, b2);
  EXPECT_EQ(s2.resumed_steps, c.halt_after);
  EXPECT_EQ(s2.stop_reason, "budget_evals");
  expect_same_decisions(whole, parts);
  // Finished evaluations were reused, not repeated: the two sessions together
  // evaluated exactly as often as the uninterrupted run.
  int calls_whole = 0, calls_parts = 0;
  for (const auto& e : a.evals) calls_whole += e->calls;
  for (const auto& e : b1.evals) calls_parts += e->calls;
  for (const auto& e : b2.evals) calls_parts += e->calls;
  EXPECT_EQ(calls_whole, calls_parts);
}

INSTANTIATE_TEST_SUITE_P(Search, HaltAndResume,
                         ::testing::Values(ResumeCase{"evolve", 1, -1, 1}, ResumeCase{"evolve", 1, -1, 11},
                                           ResumeCase{"evolve", 2, 0.3, 9}, ResumeCase{"bandit", 1, -1, 13},
                                           ResumeCase{"bandit", 2, 0.3, 6},
                                           ResumeCase{"bandit", 1, 0.3, 10, "thompson"}),
                         [](const auto& test_info) {
                           return test_info.param.method + "_" + test_info.param.rule + "_gpus" + std::to_string(test_info.param.evaluators) + "_halt" +
                                  std::to_string(test_info.param.halt_after);
                         });

std::size_t line_count(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::size_t n = 0;
  std::string line;
  while (std::getline(in, line)) ++n;
  return n;
}

TEST(Resume, SigkillThenResumeLosesNothingAndMatches) {
  auto cfg = small_config("evolve", 24, 9);
  const auto whole = fresh_dir("kill_whole"), killed = fresh_dir("kill_parts");
  FakeRun a;
  a.noisy_spread = 0.3;
  run_fake(cfg, whole, a);

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    FakeRun b;
    b.noisy_spread = 0.3;
    b.delay_ms = 25;  // slow enough for the parent to see 8 steps and kill mid-run
    try {
      run_fake(cfg, killed, b);
    } catch (...) {
      _exit(3);
    }
    _exit(0);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (line_count(trajectories_path(killed)) < 8 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child finished before it was killed";
  const std::size_t kept = records(killed).size();
  EXPECT_GE(kept, 8u);
  EXPECT_LT(kept, 24u);

  // Every evaluation that finished before the kill is on disk, and is reused.
  const auto outcomes = read_jsonl(outcomes_path(killed));
  FakeRun c;
  c.noisy_spread = 0.3;
  const auto s = run_fake(cfg, killed, c);
  EXPECT_EQ(s.resumed_steps, (long long)kept);
  EXPECT_EQ(s.reused_outcomes, (long long)outcomes.size() - (long long)kept);
  expect_same_decisions(whole, killed);
}

TEST(Resume, ToleratesATornLastLine) {
  auto cfg = small_config("bandit", 12, 3);
  const auto whole = fresh_dir("torn_whole"), torn = fresh_dir("torn_parts");
  FakeRun a;
  run_fake(cfg, whole, a);
  FakeRun b = a;
  b.halt_after = 5;
  run_fake(cfg, torn, b);
  {
    std::ofstream out(trajectories_path(torn), std::ios::app);
    out << R"({"schema":"tessera.trajectory/1","step":5,"cand)";  // killed mid-write
  }
  FakeRun c = a;
  const auto s = run_fake(cfg, torn, c);
  EXPECT_EQ(s.resumed_steps, 5);
  expect_same_decisions(whole, torn);
}

TEST(Resume, RefusesARunDirectoryOfAnotherSearch) {
  const auto dir = fresh_dir("other");
  FakeRun a;
  run_fake(small_config("evolve", 3, 1), dir, a);
  FakeRun b;
  EXPECT_THROW(run_fake(small_config("evolve", 3, 2), dir, b), Error);
  // A larger budget is fine: budgets only decide when to stop.
  FakeRun c;
  const auto s = run_fake(small_config("evolve", 5, 1), dir, c);
  EXPECT_EQ(s.totals.steps, 5);
  EXPECT_EQ(load_run_config(dir).config.budget.evals, 5);
}

}  // namespace
}  // namespace tessera::search::testing
