// Environment: reset/step over a scripted pool. What the policy reads, what
// the trainer is paid, and what the info record says, turn after turn.
#include <cmath>

#include <gtest/gtest.h>

#include "env/env.hpp"
#include "core/error.hpp"
#include "tests/env/fake_evaluator.hpp"

namespace tessera::env {
namespace {

using testing::fake_kernel;
using testing::FakeLog;
using testing::scripted_pool;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct Fixture {
  std::shared_ptr<FakeLog> log = std::make_shared<FakeLog>();
  std::shared_ptr<EvaluatorPool> pool = scripted_pool(log);

  // An environment over the scripted pool, reset on the 1024^3 task.
  std::unique_ptr<Environment> started(EnvConfig c = {}) {
    auto env = std::make_unique<Environment>(std::move(c), pool);
    env->reset(task_from_shape("1024x1024x1024"), 1);
    return env;
  }
};

std::string diff(const std::string& from, const std::string& to) {
  return "<<<<<<< SEARCH\n// " + from + "\n=======\n// " + to + "\n>>>>>>> REPLACE\n";
}

TEST(Environment, ResetShowsTheTaskTheGpuAndTheRulesAndDrawsDeterministically) {
  Fixture f;
  EnvConfig c;
  for (const char* s : {"1024x1024x1024", "512x256x128", "64x64x64"}) c.tasks.push_back(task_from_shape(s));
  Environment a(c, f.pool), b(c, f.pool);
  const auto ra = a.reset(std::nullopt, 7);
  const auto rb = b.reset(std::nullopt, 7);
  EXPECT_EQ(ra.observation, rb.observation);
  EXPECT_EQ(ra.info.at("task_id"), draw_task(c.tasks, 7).id());
  EXPECT_EQ(ra.info.at("seed"), 7);
  EXPECT_EQ(ra.info.at("max_turns"), 3);
  EXPECT_EQ(ra.info.at("device"), "FakeGPU");
  ASSERT_EQ(ra.info.at("messages").size(), 2u);
  EXPECT_EQ(ra.info["messages"][0]["role"], "system");
  EXPECT_EQ(ra.observation, ra.info["messages"][0]["content"].get<std::string>() + "\n\n" +
                                ra.info["messages"][1]["content"].get<std::string>());
  const auto& obs = ra.observation;
  EXPECT_TRUE(has(obs, "FakeGPU (sm_90a), 132 SMs")) << obs;          // the agent's system prompt
  EXPECT_TRUE(has(obs, "struct TesseraGemmParams"));                 // with the ABI
  EXPECT_TRUE(has(obs, "from scratch"));                              // no kernel yet
  EXPECT_TRUE(has(obs, "You have 3 turns"));
  EXPECT_TRUE(has(obs, "\"bm\":128"));                                // the tile config's defaults
  EXPECT_FALSE(has(obs, "tessera_launch, in one"));                   // no translation units by default
  EXPECT_EQ(a.turn(), 0);
  EXPECT_FALSE(a.done());
}

TEST(Environment, AThreeTurnEpisode) {
  Fixture f;
  auto started = f.started();
  Environment& env = *started;

  // Turn 1: a kernel at half the baseline's speed.
  auto s1 = env.step("```cuda\n" + fake_kernel("FAKE_SPEEDUP(0.5)") + "```");
  ASSERT_TRUE(s1.reward.has_value());
  EXPECT_NEAR(*s1.reward, 1.0 + std::log(0.5), 1e-9);
  EXPECT_FALSE(s1.terminated);
  EXPECT_EQ(s1.info.at("turn"), 1);
  EXPECT_EQ(s1.info.at("action_kind"), "device_only");
  EXPECT_EQ(s1.info.at("masked"), false);
  EXPECT_EQ(s1.info.at("result").at("status"), "ok");
  EXPECT_EQ(s1.info.at("reward").at("class"), "ok");
  EXPECT_EQ(s1.info.at("baseline_protocol"), "interleaved");
  EXPECT_EQ(s1.info.at("best_speedup"), 0.5);
  EXPECT_EQ(s1.info.at("best_turn"), 1);
  EXPECT_EQ(s1.info.at("attempts").size(), 1u);
  EXPECT_EQ(s1.info.at("retried"), false);
  const auto& o1 = s1.observation;
  EXPECT_TRUE(has(o1, "# Turn 1 of 3: ok, 200.00 us, 0.500x vs cublas_tn")) << o1;
  EXPECT_TRUE(has(o1, "speedup 0.500x"));
  EXPECT_TRUE(has(o1, "baselines, cold median: cublas_tn 100.00 us, cublaslt_heuristic 100.00 us"));
  EXPECT_TRUE(has(o1, "bottleneck reading"));
  EXPECT_TRUE(has(o1, "- score: 0.307 (ok)"));
  EXPECT_TRUE(has(o1, "You have 2 more turns"));
  EXPECT_TRUE(has(o1, "<<<<<<< SEARCH"));             // diffs are offered now
  EXPECT_FALSE(has(o1, "# Current kernel"));          // the policy wrote this source itself

  // Turn 2: a diff of it, twice the baseline's speed; the observation shows the
  // kernel the diff made, so the next diff can quote it.
  auto s2 = env.step(diff("FAKE_SPEEDUP(0.5)", "FAKE_SPEEDUP(2.0)"));
  ASSERT_TRUE(s2.reward.has_value());
  EXPECT_NEAR(*s2.reward, 1.0 + std::log(2.0), 1e-9);
  EXPECT_EQ(s2.info.at("action_kind"), "diff");
  EXPECT_EQ(s2.info.at("best_speedup"), 2.0);
  EXPECT_EQ(s2.info.at("best_turn"), 2);
  EXPECT_TRUE(has(s2.observation, "# Current kernel: turn 2\n```cuda\n")) << s2.observation;
  EXPECT_TRUE(has(s2.observation, "// FAKE_SPEEDUP(2.0)"));
  EXPECT_TRUE(has(s2.observation, "You have 1 more turn."));

  // Turn 3: not a kernel. Penalised, said why, the best is kept, the episode ends.
  auto s3 = env.step("Let me think about shared memory first.");
  ASSERT_TRUE(s3.reward.has_value());
  EXPECT_DOUBLE_EQ(*s3.reward, kDefaultFormatPenalty);
  EXPECT_TRUE(s3.terminated);
  EXPECT_FALSE(s3.truncated);
  EXPECT_EQ(s3.info.at("format_ok"), false);
  EXPECT_TRUE(s3.info.at("result").is_null());
  EXPECT_TRUE(has(s3.info.at("format_error").get<std::string>(), "no kernel found"));
  EXPECT_EQ(s3.info.at("best_speedup"), 2.0);
  EXPECT_TRUE(has(s3.observation, "your reply is not a kernel"));
  EXPECT_TRUE(has(s3.observation, "best so far: 2.000x"));
  EXPECT_TRUE(has(s3.observation, "The episode is over."));

  ASSERT_EQ(env.history().size(), 3u);
  EXPECT_EQ(env.history()[1].action_kind, "diff");
  EXPECT_TRUE(has(env.history()[1].source, "FAKE_SPEEDUP(2.0)"));
  EXPECT_FALSE(env.history()[2].result.has_value());
  EXPECT_EQ(env.best_turn(), 2);
  EXPECT_TRUE(env.done());
  EXPECT_EQ(f.log->calls, 2);  // the format failure was never evaluated
  EXPECT_THROW(env.step("more"), Error);
}

TEST(Environment, FailuresAreFeedbackInTheAgentsWords) {
  Fixture f;
  auto env = f.started();
  auto s = env->step(fake_kernel("FAKE_COMPILE_ERROR"));
  EXPECT_DOUBLE_EQ(*s.reward, kDefaultCompilePenalty);
  EXPECT_TRUE(has(s.observation, "identifier \"acc2\" is undefined")) << s.observation;
  EXPECT_TRUE(has(s.observation, "best so far: no correct, timed kernel yet"));
  s = env->step(fake_kernel("FAKE_WRONG"));
  EXPECT_DOUBLE_EQ(*s.reward, kDefaultWrongPenalty);
  EXPECT_TRUE(has(s.observation, "first failure: trial 1 (uniform)")) << s.observation;
  EXPECT_FALSE(env->best_speedup().has_value());
}

TEST(Environment, InfraFailuresAreRetriedThenMaskedNeverPenalised) {
  Fixture f;
  EnvConfig no_retry;
  no_retry.infra_retries = 0;
  auto env = f.started(no_retry);
  auto s = env->step(fake_kernel("FAKE_INFRA"));
  EXPECT_FALSE(s.reward.has_value());
  EXPECT_EQ(s.info.at("masked"), true);
  EXPECT_TRUE(s.info.at("reward").at("scalar").is_null());
  EXPECT_EQ(s.info.at("attempts").size(), 1u);
  EXPECT_TRUE(has(s.observation, "the machine failed, not your kernel")) << s.observation;
  EXPECT_TRUE(has(s.observation, "score: none"));
  // The kernel parsed, so the next diff applies to it.
  s = env->step(diff("FAKE_INFRA", "FAKE_SPEEDUP(1.0)"));
  ASSERT_TRUE(s.reward.has_value());
  EXPECT_EQ(s.info.at("action_kind"), "diff");

  EnvConfig retry;  // the default: one retry on a fresh worker
  s = f.started(retry)->step(fake_kernel("FAKE_INFRA_ONCE"));
  ASSERT_TRUE(s.reward.has_value());
  EXPECT_EQ(s.info.at("result").at("status"), "ok");
  EXPECT_EQ(s.info.at("retried"), true);
  ASSERT_EQ(s.info.at("attempts").size(), 2u);
  EXPECT_EQ(s.info["attempts"][0]["status"], "infra_error");
  EXPECT_EQ(s.info["attempts"][1]["status"], "ok");

  retry.infra_retries = 2;
  s = f.started(retry)->step(fake_kernel("FAKE_INFRA"));
  EXPECT_FALSE(s.reward.has_value());
  EXPECT_EQ(s.info.at("attempts").size(), 3u);
}

TEST(Environment, BaselinesReusedOnlyWhenAskedAndLabelled) {
  Fixture f;
  const Task t = task_from_shape("1536x1536x1536");  // a task no other test uses: the cache is per process
  EnvConfig honest;
  Environment a(honest, f.pool);
  a.reset(t, 1);
  a.step(fake_kernel("FAKE_SPEEDUP(1.0)"));
  a.step(fake_kernel("FAKE_SPEEDUP(1.1)"));
  EXPECT_EQ(f.log->baselines_asked, (std::vector<bool>{true, true}));

  EnvConfig fast;
  fast.reuse_baselines = true;
  Environment b(fast, f.pool);
  b.reset(t, 1);
  auto s1 = b.step(fake_kernel("FAKE_SPEEDUP(1.2)"));
  auto s2 = b.step(fake_kernel("FAKE_SPEEDUP(4.0)"));
  // The first times the baselines beside its kernel (call 3), then its kernel
  // alone (call 4), which is what it reports: every kernel of the task is
  // timed alone against the one measurement of its baselines.
  EXPECT_EQ(f.log->baselines_asked, (std::vector<bool>{true, true, true, false, false}));
  EXPECT_EQ(s1.info.at("baseline_protocol"), "reused");
  EXPECT_EQ(s1.info.at("baseline_source").at("measured_at"), "call-3");
  EXPECT_EQ(s1.info.at("result").at("started_at"), "call-4");
  EXPECT_DOUBLE_EQ(s1.info.at("result").at("speedup").get<double>(), 1.2);
  ASSERT_EQ(s1.info.at("attempts").size(), 2u);
  EXPECT_TRUE(s1.info["attempts"][1].contains("rerun"));
  EXPECT_EQ(s2.info.at("baseline_protocol"), "reused");
  EXPECT_EQ(s2.info.at("baseline_source").at("device"), "FakeGPU");
  EXPECT_EQ(s2.info.at("baseline_source").at("measured_at"), "call-3");
  EXPECT_DOUBLE_EQ(s2.info.at("result").at("speedup").get<double>(), 4.0);  // against the lent 100 us
  EXPECT_NEAR(*s2.reward, 1.0 + kDefaultPerformanceClip, 1e-9);            // clipped at 3x

  // A GPU of another kind does not borrow them: measured again, in the same
  // run, then its kernel alone against them.
  auto other_log = std::make_shared<FakeLog>();
  Environment c(fast, scripted_pool(other_log, 1, "OtherGPU"));
  c.reset(t, 1);
  auto s3 = c.step(fake_kernel("FAKE_SPEEDUP(1.3)"));
  EXPECT_EQ(other_log->baselines_asked, (std::vector<bool>{false, true, false}));
  EXPECT_EQ(s3.info.at("baseline_protocol"), "reused");
  EXPECT_EQ(s3.info.at("baseline_source").at("device"), "OtherGPU");
  EXPECT_TRUE(s3.info["attempts"][0].contains("rerun"));
  EXPECT_TRUE(s3.info["attempts"][2].contains("rerun"));
}

TEST(Environment, CountersOffLeavesThemOutOfTheMeasurementAndTheFeedback) {
  Fixture f;
  EnvConfig c;
  c.counters_in_feedback = false;
  const auto s = f.started(c)->step(fake_kernel("FAKE_SPEEDUP(1.0)"));
  EXPECT_EQ(f.log->counters_asked, std::vector<bool>{false});
  EXPECT_FALSE(has(s.observation, "bottleneck reading"));
}

TEST(Environment, ResetOptionsAndMisuse) {
  Fixture f;
  Environment env(EnvConfig{}, f.pool);
  EXPECT_THROW(env.step("x"), Error);                       // before reset
  EXPECT_THROW(env.reset(std::nullopt, 1), Error);          // no task, none to draw from
  const auto r = env.reset(std::nullopt, 1, {{"task", "256x256x256"}, {"max_turns", 1}});
  EXPECT_EQ(r.info.at("task_id"), task_from_shape("256x256x256").id());
  EXPECT_TRUE(has(r.observation, "You have 1 turn."));
  EXPECT_TRUE(env.step(fake_kernel("A")).terminated);
  EXPECT_THROW(env.reset(std::nullopt, 1, {{"turns", 2}}), Error);
  EXPECT_THROW(env.reset(std::nullopt, 1, {{"task", "1x2"}}), Error);
  // A new episode forgets the last one.
  env.reset(task_from_shape("256x256x256"), 2);
  EXPECT_EQ(env.turn(), 0);
  EXPECT_TRUE(env.history().empty());
  EXPECT_FALSE(env.best_speedup().has_value());
  EXPECT_FALSE(env.step(diff("A", "B")).info.at("format_ok").get<bool>());  // no kernel to diff yet
}

}  // namespace
}  // namespace tessera::env
