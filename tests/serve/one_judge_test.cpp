// One EnvConfig, one judge: a session's step, the one-turn batch
// (score_actions), /v1/evaluate and /get_reward retry the same number of
// times, ask for counters the same way and answer with the same record
// (env/judge.hpp). The evaluators are the environment's scripted ones, each
// failing with infra_error a set number of times before it answers.
// (Python's Pool.evaluate_batch: tests/python/test_one_judge.py.)
#include <gtest/gtest.h>

#include <set>

#include "env/env.hpp"
#include "env/judge.hpp"
#include "env/score.hpp"
#include "fakes.hpp"
#include "tests/env/fake_evaluator.hpp"

namespace tessera::serve::testing {
namespace {

using tessera::testing::fake_kernel;
using tessera::testing::FakeLog;
using tessera::testing::ScriptedEvaluator;

const Task kTask = task_from_shape("1024x1024x1024");

// Keys a path adds to the judged record: the episode's, the service's.
const std::set<std::string> kEpisodeKeys = {"turn", "max_turns", "best_speedup", "best_turn"};
const std::set<std::string> kServiceKeys = {"latency_ms"};

std::set<std::string> keys_without(const nlohmann::json& record, const std::set<std::string>& extra) {
  std::set<std::string> out;
  for (const auto& [k, v] : record.items())
    if (!extra.count(k)) out.insert(k);
  return out;
}

std::vector<std::string> statuses(const nlohmann::json& attempts) {
  std::vector<std::string> out;
  for (const auto& a : attempts) out.push_back(a.at("status").get<std::string>());
  return out;
}

// The service over scripted evaluators, judging under `config`.
struct Judged {
  env::EnvConfig config;
  std::shared_ptr<FakeLog> log = std::make_shared<FakeLog>();
  std::shared_ptr<EvaluatorSlots> slots;
  std::unique_ptr<Service> service;

  explicit Judged(env::EnvConfig c) : config(std::move(c)) {
    std::vector<EvaluatorFactory> factories(2, [log = log] { return std::make_unique<ScriptedEvaluator>(log); });
    slots = std::make_shared<EvaluatorSlots>(factories);
    service = std::make_unique<Service>(test_options(), make_env_backend(slots, config));
  }

  env::StepResult step(const std::string& action) {
    env::Environment e(config, slots->pool());
    e.reset(kTask, 0);
    return e.step(action);
  }
  env::Scored score(const std::string& action) {
    return env::score_actions({{action, kTask, std::nullopt}}, config, slots->pool()).front();
  }
  nlohmann::json evaluate(const std::string& action) {
    const auto r = call(*service, "POST", "/v1/evaluate", eval_body(action, kTask.shape()));
    EXPECT_EQ(r.status, 200) << r.body;
    return nlohmann::json::parse(r.body);
  }
  nlohmann::json get_reward(const std::string& action) {
    const nlohmann::json body = {{"query", {action}}, {"labels", {kTask.shape()}}};
    const auto r = call(*service, "POST", "/get_reward", body.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return nlohmann::json::parse(r.body);
  }
  // Evaluations of the kernels whose source holds `marker`.
  int runs(const std::string& marker) {
    std::lock_guard g(log->mu);
    int n = 0;
    for (const auto& [source, calls] : log->calls_by_source) n += source.find(marker) != std::string::npos ? calls : 0;
    return n;
  }
};

TEST(OneJudge, EveryPathRetriesCountsAndRecordsAlikeUnderOneEnvConfig) {
  env::EnvConfig config;
  config.infra_retries = 2;
  config.counters_in_feedback = false;
  Judged j(config);
  // Each path its own kernel (the fake counts attempts per source): two
  // infra_errors, then ok at 2x.
  auto kernel = [](const char* path) { return fake_kernel(std::string("FAKE_INFRA_TIMES(2) FAKE_SPEEDUP(2.0) ") + path); };
  const auto step = j.step(kernel("step"));
  const auto scored = j.score(kernel("score"));
  const auto evaluated = j.evaluate(kernel("evaluate"));
  const auto rewarded = j.get_reward(kernel("get_reward"));

  const std::vector<std::string> retried = {"infra_error", "infra_error", "ok"};
  EXPECT_EQ(statuses(step.info.at("attempts")), retried);
  EXPECT_EQ(statuses(scored.info.at("attempts")), retried);
  EXPECT_EQ(statuses(evaluated.at("attempts")), retried);
  EXPECT_EQ(rewarded.at("extra_logs").at("attempts"), nlohmann::json({3}));
  for (const char* path : {" step", " score", " evaluate", " get_reward"}) EXPECT_EQ(j.runs(path), 3) << path;

  // counters_in_feedback off: no evaluation asked for counters, whichever path.
  EXPECT_EQ(j.log->counters_asked, std::vector<bool>(12, false));

  // One reward, one record.
  ASSERT_TRUE(step.reward.has_value());
  EXPECT_DOUBLE_EQ(*scored.reward, *step.reward);
  EXPECT_DOUBLE_EQ(evaluated.at("reward").at("scalar").get<double>(), *step.reward);
  EXPECT_DOUBLE_EQ(rewarded.at("rewards").at(0).get<double>(), *step.reward);
  const auto record = keys_without(scored.info, {});
  EXPECT_EQ(keys_without(step.info, kEpisodeKeys), record);
  EXPECT_EQ(keys_without(evaluated, kServiceKeys), record);
  for (const char* key : {"status", "action_kind", "format_ok", "reward", "masked", "result", "attempts", "retried",
                          "baseline_protocol", "task_id"})
    EXPECT_TRUE(record.count(key)) << key;
  EXPECT_EQ(evaluated.at("reward"), scored.info.at("reward"));
  EXPECT_EQ(evaluated.at("status"), "ok");
  EXPECT_EQ(step.info.at("status"), "ok");
}

TEST(OneJudge, RetriesSpentAreMaskedOnEveryPath) {
  env::EnvConfig config;
  config.infra_retries = 1;
  Judged j(config);
  auto kernel = [](const char* path) { return fake_kernel(std::string("FAKE_INFRA_TIMES(2) ") + path); };
  const auto step = j.step(kernel("step"));
  const auto scored = j.score(kernel("score"));
  const auto evaluated = j.evaluate(kernel("evaluate"));
  const auto rewarded = j.get_reward(kernel("get_reward"));

  EXPECT_FALSE(step.reward.has_value());
  EXPECT_FALSE(scored.reward.has_value());
  EXPECT_TRUE(evaluated.at("masked").get<bool>());
  EXPECT_TRUE(evaluated.at("reward").at("scalar").is_null());
  EXPECT_EQ(rewarded.at("extra_logs").at("masked"), nlohmann::json({1}));
  const std::vector<std::string> spent = {"infra_error", "infra_error"};
  EXPECT_EQ(statuses(step.info.at("attempts")), spent);
  EXPECT_EQ(statuses(scored.info.at("attempts")), spent);
  EXPECT_EQ(statuses(evaluated.at("attempts")), spent);
  EXPECT_EQ(rewarded.at("extra_logs").at("attempts"), nlohmann::json({2}));
  // counters_in_feedback on (the default): every evaluation asked for them.
  EXPECT_EQ(j.log->counters_asked, std::vector<bool>(8, true));
}

TEST(OneJudge, ARequestsOwnCountersOptionIsTheConfigsCountersInFeedback) {
  Judged j(env::EnvConfig{});
  const nlohmann::json body = {{"task", kTask.shape()}, {"action", fake_kernel("options")}, {"options", {{"counters", false}}}};
  ASSERT_EQ(call(*j.service, "POST", "/v1/evaluate", body.dump()).status, 200);
  EXPECT_EQ(j.log->counters_asked, std::vector<bool>{false});
  const auto with = env::with_eval_options(j.config, env::judged_eval_options(j.config));
  EXPECT_EQ(with.counters_in_feedback, j.config.counters_in_feedback) << "no options: the config unchanged";
}

}  // namespace
}  // namespace tessera::serve::testing
