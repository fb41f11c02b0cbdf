// The search loop end to end with fake proposers and evaluators.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "engine_helpers.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "search/progress.hpp"
#include "search/run_files.hpp"
#include "tests/testing.hpp"

namespace tessera::search::testing {
namespace {

TEST(Engine, EvolveRunRecordsEveryStepAndImproves) {
  const auto dir = fresh_dir("evolve");
  FakeRun run;
  const auto summary = run_fake(small_config("evolve", 30), dir, run);
  EXPECT_EQ(summary.stop_reason, "budget_evals");
  const auto recs = records(dir);
  ASSERT_EQ(recs.size(), 30u);
  for (std::size_t i = 0; i < recs.size(); ++i) {
    EXPECT_EQ(recs[i]["step"], i);
    EXPECT_EQ(recs[i]["schema"], kTrajectorySchema);
  }
  const auto& t = summary.totals;
  EXPECT_EQ(t.steps, 30);
  // Every evaluation the fake saw is accounted for (duplicates were never evaluated).
  EXPECT_EQ(t.evaluations, run.evals[0]->calls.load());
  EXPECT_GT(t.best_speedup, recs.front()["eval"]["speedup"].get<double>() * 0.999);
  EXPECT_GT(t.best_speedup, 1.0);
  EXPECT_EQ(run.evals[0]->max_concurrent.load(), 1);
  // The best kernel file is the best record's source with a header.
  const std::string best = read_file(best_kernel_path(dir, task_from_shape("1024x1024x1024").id()));
  EXPECT_NE(best.find("__global__ void k()"), std::string::npos);
  EXPECT_NE(best.find("// tessera search: best kernel"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir / "state.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / "config.json"));
}

// Every proposed kernel is compiled on the proposal thread before its
// evaluation, so the compile overlaps the measurement of the step before.
TEST(Engine, CandidatesAreCompiledAheadOfTheirEvaluation) {
  const auto dir = fresh_dir("ahead");
  FakeRun run;
  run_fake(small_config("evolve", 20), dir, run);
  const auto& st = *run.evals[0];
  EXPECT_GE(st.compiled_ahead.load(), 20);
  EXPECT_EQ(st.evaluated_after_ahead.load(), st.calls.load());
}

TEST(Engine, NoCandidateIsEvaluatedTwice) {
  const auto dir = fresh_dir("novelty");
  FakeRun run;
  // 72 distinct configs and 60 steps: the proposer repeats itself often.
  run_fake(small_config("evolve", 60), dir, run);
  std::set<std::string> keys;
  long long rejected = 0;
  for (const auto& r : records(dir)) {
    rejected += long(r["novelty_rejects"].size());
    if (!r["evaluated"].get<bool>()) continue;
    EXPECT_TRUE(keys.insert(r["novelty_key"].get<std::string>()).second) << "step " << r["step"];
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(run.proposers[0]->calls.load(), 60);  // re-proposals after duplicates
  // A re-proposal is shown the duplicate it made.
  EXPECT_GT(run.proposers[0]->saw_rejected_history.load(), 0);
}

TEST(Engine, BanditRunLogsArmsAndMasks) {
  const auto dir = fresh_dir("bandit");
  FakeRun run;
  auto cfg = small_config("bandit", 30);
  cfg.saturated_pct = 80;  // the fake's tensor pipe reaches 88% at 4 stages
  run_fake(cfg, dir, run);
  const auto recs = records(dir);
  ASSERT_EQ(recs.size(), 30u);
  std::set<std::string> strategies;
  bool masked = false;
  for (const auto& r : recs) {
    EXPECT_GE(r["proposer"]["arm"].get<int>(), 0);
    strategies.insert(r["proposer"]["strategy"].get<std::string>());
    masked |= !r["proposer"]["masked_arms"].empty();
    if (r["step"].get<int>() >= 2) {
      EXPECT_EQ(r["selection"], "bandit");
    }
  }
  // UCB1 tries every arm first (6 tile strategies).
  EXPECT_EQ(strategies.size(), 6u);
  EXPECT_TRUE(masked);
  for (const auto& r : recs)
    for (const auto& m : r["proposer"]["masked_arms"]) EXPECT_NE(m.get<std::string>(), "tile/" + r["proposer"]["strategy"].get<std::string>());
}

TEST(Engine, DecisionsDoNotDependOnTheNumberOfEvaluators) {
  auto cfg = small_config("evolve", 24);
  cfg.pipeline_depth = 4;
  FakeRun one, two;
  two.evaluators = 2;
  two.delay_ms = 3;
  const auto d1 = fresh_dir("one_gpu"), d2 = fresh_dir("two_gpus");
  run_fake(cfg, d1, one);
  run_fake(cfg, d2, two);
  auto a = decisions(d1), b = decisions(d2);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "step " << i;
  // Each GPU measured one candidate at a time, and both were used.
  EXPECT_EQ(two.evals[0]->max_concurrent.load(), 1);
  EXPECT_EQ(two.evals[1]->max_concurrent.load(), 1);
  EXPECT_GT(two.evals[0]->calls.load(), 0);
  EXPECT_GT(two.evals[1]->calls.load(), 0);
}

TEST(Engine, BorderlineWinnersAreRemeasuredAndRecorded) {
  const auto dir = fresh_dir("noise");
  FakeRun run;
  run.noisy_spread = 0.30;  // wider than most real improvements between neighbours
  const auto summary = run_fake(small_config("evolve", 40), dir, run);
  EXPECT_GT(summary.totals.remeasured, 0);
  long long remeasured = 0, changed = 0;
  for (const auto& r : records(dir)) {
    if (r["acceptance"]["remeasured"].get<bool>()) {
      ++remeasured;
      EXPECT_TRUE(r["first_eval"].is_object());
      EXPECT_FALSE(r["verdict_final"].get<std::string>().empty());
    }
    changed += r["acceptance"]["changed_decision"].get<bool>();
  }
  EXPECT_EQ(remeasured, summary.totals.remeasured);
  EXPECT_GT(changed, 0);
  EXPECT_EQ(changed, summary.totals.noise_changed_decisions);
  EXPECT_EQ(summary.totals.evaluations, run.evals[0]->calls.load());
}

TEST(Engine, FailuresAreDataNotExceptions) {
  const auto dir = fresh_dir("failures");
  FakeRun run;
  run.broken_stages = 3;
  run.fail_every = 5;
  const auto summary = run_fake(small_config("evolve", 30), dir, run);
  EXPECT_EQ(summary.totals.steps, 30);
  EXPECT_GT(summary.totals.by_status.count("compile_error"), 0u);
  EXPECT_GT(summary.totals.proposal_failures, 0);
  for (const auto& r : records(dir)) {
    if (r["evaluated"].get<bool>() && r["eval"]["status"] == "compile_error") {
      EXPECT_EQ(r["reward"]["scalar"], kFailurePenalty);
    }
    if (!r["proposal_ok"].get<bool>()) {
      EXPECT_TRUE(r["eval"].is_null());
    }
  }
}

TEST(Budget, StopsOnTokensDollarsAndPeakFraction) {
  {
    FakeRun run;
    run.tokens_per_call = 1000;
    auto cfg = small_config("evolve", 100);
    cfg.budget.tokens = 5000;
    const auto s = run_fake(cfg, fresh_dir("tokens"), run);
    EXPECT_EQ(s.stop_reason, "budget_tokens");
    EXPECT_GE(s.totals.tokens, 5000);
    EXPECT_LT(s.totals.steps, 100);
  }
  {
    FakeRun run;
    run.usd_per_call = 0.25;
    auto cfg = small_config("bandit", 100);
    cfg.budget.usd = 1.0;
    const auto s = run_fake(cfg, fresh_dir("usd"), run);
    EXPECT_EQ(s.stop_reason, "budget_usd");
    EXPECT_LT(s.totals.steps, 100);
  }
  {
    FakeRun run;
    auto cfg = small_config("evolve", 100);
    cfg.budget.stop_at_peak_fraction = 1e-6;  // any timed kernel reaches it
    const auto s = run_fake(cfg, fresh_dir("peak"), run);
    EXPECT_EQ(s.stop_reason, "peak_fraction");
    EXPECT_LT(s.totals.steps, 10);
  }
}

TEST(Budget, CostAwareBanditRunsOnTokenCosts) {
  FakeRun run;
  run.tokens_per_call = 800;
  auto cfg = small_config("bandit", 20);
  cfg.bandit_cost = "tokens";
  cfg.bandit_rule = "thompson";
  const auto s = run_fake(cfg, fresh_dir("cost_aware"), run);
  EXPECT_EQ(s.totals.steps, 20);
  EXPECT_GE(s.totals.tokens, 20 * 800);  // duplicates' re-proposals cost tokens too
}

using ::tessera::testing::contents_and_close;

TEST(Progress, PlainLinesWhenNotATerminal) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  auto p = make_progress(f);
  ProgressSnapshot snap;
  snap.totals.steps = 3;
  snap.totals.evaluations = 4;
  snap.totals.by_status["compile_error"] = 1;
  snap.totals.any_timed = true;
  snap.totals.best_speedup = 1.25;
  snap.budget_steps = 10;
  snap.totals.repeated_proposals = 2;
  p->update(snap);
  p->message("step 2: the endpoint refused the key");
  p->finish(snap);
  const std::string text = contents_and_close(f);
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_NE(text.find("best 1.250x"), std::string::npos) << text;
  EXPECT_NE(text.find("3/10 steps, 4 evals, 2 repeats"), std::string::npos) << text;
  EXPECT_NE(text.find("compile_error 1"), std::string::npos) << text;
  EXPECT_NE(text.find("search: step 2: the endpoint refused the key\n"), std::string::npos) << text;
  EXPECT_NE(text.find("search: done:"), std::string::npos) << text;
}

TEST(Progress, QuietShowsMessagesOnly) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  auto p = make_progress(f, /*quiet=*/true);
  ProgressSnapshot snap;
  snap.budget_steps = 10;
  p->update(snap);
  p->message("stopping: 3 proposals in a row failed");
  p->finish(snap);
  const std::string text = contents_and_close(f);
  EXPECT_EQ(text, "search: stopping: 3 proposals in a row failed\n");
}

// A masked step (the machine failed, not the candidate) is no pull of its
// arm: the bandit's statistics count only the steps that were scored.
TEST(Engine, AMaskedStepGivesItsArmNoUpdate) {
  const auto dir = fresh_dir("masked");
  FakeRun run;
  run.infra_error_stages = 3;
  run_fake(small_config("bandit", 40), dir, run);
  std::map<int, long long> scored;
  long long masked = 0;
  for (const auto& r : records(dir)) {
    const int arm = r["proposer"]["arm"].get<int>();
    scored[arm] += 0;
    if (r["reward"]["masked"].get<bool>()) ++masked;
    else ++scored[arm];
  }
  ASSERT_GT(masked, 0) << "the fake fails configs with 3 stages as the machine's fault";
  const auto state = nlohmann::json::parse(read_file(dir / "state.json"));
  const auto& arms = state["method"]["arms"];
  long long pulls = 0;
  for (std::size_t i = 0; i < arms.size(); ++i) {
    EXPECT_EQ(arms[i]["pulls"].get<long long>(), scored[int(i)]) << arms[i]["arm"];
    pulls += arms[i]["pulls"].get<long long>();
  }
  EXPECT_EQ(pulls + masked, 40);
}

TEST(Budget, InvalidConfigIsBadInput) {
  auto cfg = small_config("evolve", 0);
  EXPECT_THROW(cfg.validate(), Error);
  cfg = small_config("anneal", 10);
  EXPECT_THROW(cfg.validate(), Error);
  cfg = small_config("bandit", 10);
  cfg.bandit_rule = "epsilon";
  EXPECT_THROW(cfg.validate(), Error);
}

TEST(Engine, CompileOnlyRunsNeverClaimATime) {
  const auto dir = fresh_dir("compile_only");
  FakeRun run;
  auto cfg = small_config("evolve", 12);
  cfg.compile_only = true;
  const auto s = run_fake(cfg, dir, run);
  EXPECT_FALSE(s.totals.any_timed);
  EXPECT_EQ(s.totals.by_status.at("compiled"), s.totals.evaluations);
  for (const auto& r : records(dir)) EXPECT_FALSE(r["reward"]["timed"].get<bool>());
  EXPECT_FALSE(std::filesystem::exists(dir / "best"));
}

TEST(Engine, SeveralTasksAreVisitedRoundRobin) {
  const auto dir = fresh_dir("tasks");
  FakeRun run;
  run.tasks = {task_from_shape("256x256x256"), task_from_shape("512x256x128")};
  const auto s = run_fake(small_config("bandit", 12), dir, run);
  const auto recs = records(dir);
  for (const auto& r : recs) EXPECT_EQ(r["task_id"], run.tasks[r["step"].get<int>() % 2].id());
  EXPECT_GT(s.totals.best_speedup, 0);
}

// SearchConfig::reuse_baselines: each task's first timed evaluation times the
// baselines, then its kernel again alone, and the rest borrow them and say so:
// every kernel of a task is timed alone, so the one timed beside the
// baselines (slower here by the fake's 10%) is not handicapped against the
// rest. Off, every one times them beside it.
TEST(Engine, ReusedBaselinesAreTimedOncePerTaskAndLentToTheRest) {
  const auto dir = fresh_dir("reuse");
  FakeRun run;
  run.tasks = {task_from_shape("256x256x256"), task_from_shape("512x256x128")};
  run.beside_baselines = 1.10;
  SearchConfig config = small_config("bandit", 12);
  config.reuse_baselines = true;
  config.noise_aware = false;  // one measurement per step: the evaluator's calls are counted below
  const auto s = run_fake(config, dir, run);
  EXPECT_EQ(run.evals[0]->timed_baselines, 2) << "once per task";
  std::map<std::string, int> reused;
  int timed_steps = 0;
  for (const auto& r : records(dir)) {
    const auto& e = r["eval"];
    if (e.is_null() || e["status"] != "ok") continue;
    ++timed_steps;
    const std::string task = r["task_id"];
    EXPECT_EQ(r["baseline_protocol"], "reused") << r["step"];
    reused[task]++;
    EXPECT_FALSE(e["baselines"].empty()) << r["step"];
    EXPECT_NEAR(e["speedup"].get<double>(), e["best_baseline_us"].get<double>() / e["cold"]["median_us"].get<double>(),
                1e-9);
    EXPECT_EQ(r["baseline_source"]["device"], "FakeGPU0");
    EXPECT_EQ(r["baseline_source"]["best_baseline_us"], 1000.0);
    // Timed alone: within the fake's noise (2% spread, a quarter of it) of the
    // config's own speedup, never its 10% slower time beside the baselines.
    const auto cfg = FakeConfig::from(r["candidate"]["meta"]["tile_config"]);
    EXPECT_NEAR(e["speedup"].get<double>() / fake_speedup(cfg), 1.0, 0.005) << r["step"];
  }
  for (const auto& t : run.tasks) EXPECT_GT(reused[t.id()], 0) << t.id();
  EXPECT_EQ(run.evals[0]->calls, timed_steps + 2) << "each task's first kernel timed twice, beside and alone";
  EXPECT_EQ(s.totals.evaluations, timed_steps) << "the second timing is not a step of the budget";
  EXPECT_TRUE(load_run_config(dir).config.reuse_baselines) << "kept in config.json for a resume";

  const auto plain_dir = fresh_dir("no_reuse");
  FakeRun plain;
  run_fake(small_config("bandit", 12), plain_dir, plain);
  EXPECT_EQ(plain.evals[0]->timed_baselines, plain.evals[0]->calls) << "off: beside every evaluation";
  for (const auto& r : records(plain_dir)) {
    if (r["eval"].is_null() || r["eval"]["status"] != "ok") continue;
    EXPECT_EQ(r["baseline_protocol"], "interleaved");
  }
}

// The second run of a task's first kernel (alone, after the one that timed
// the baselines) failed by the machine: the first run stands, interleaved.
TEST(Engine, AFailedAloneRunLeavesTheInterleavedOneStanding) {
  const auto dir = fresh_dir("reuse_infra");
  FakeRun run;
  run.infra_on_call = 2;
  SearchConfig config = small_config("bandit", 6);
  config.reuse_baselines = true;
  config.noise_aware = false;
  run_fake(config, dir, run);
  const auto recs = records(dir);
  ASSERT_FALSE(recs.empty());
  const auto first = std::find_if(recs.begin(), recs.end(), [](const auto& r) { return r["step"] == 0; });
  ASSERT_NE(first, recs.end());
  EXPECT_EQ((*first)["eval"]["status"], "ok");
  EXPECT_EQ((*first)["baseline_protocol"], "interleaved");
  for (const auto& r : recs)
    if (r["step"] != 0 && r["eval"]["status"] == "ok") {
      EXPECT_EQ(r["baseline_protocol"], "reused") << r["step"];
    }
}

// Baselines timed on one GPU are not lent to another: each evaluator times
// its own once per task.
TEST(Engine, BaselinesAreNotLentAcrossGpus) {
  const auto dir = fresh_dir("reuse_gpus");
  FakeRun run;
  run.evaluators = 2;
  run.delay_ms = 5;
  SearchConfig config = small_config("evolve", 16);
  config.reuse_baselines = true;
  run_fake(config, dir, run);
  int reused = 0;
  for (const auto& r : records(dir)) {
    if (r["baseline_protocol"] != "reused") continue;
    ++reused;
    EXPECT_EQ(r["baseline_source"]["device"], r["device"]) << r["step"];
  }
  EXPECT_GT(reused, 0);
  for (const auto& e : run.evals) EXPECT_EQ(e->timed_baselines, 1) << "each GPU once, its first evaluation";
}

}  // namespace
}  // namespace tessera::search::testing
