// The search with the real LLM proposer against the loopback server (and the
// fake evaluator): failing fast, a hard cost budget, repeats fed back, and an
// ensemble's models as bandit arms.
#include <gtest/gtest.h>

#include <atomic>

#include "agent/registry.hpp"
#include "engine_helpers.hpp"
#include "core/fs.hpp"
#include "search/report.hpp"
#include "tests/agent/test_server.hpp"

namespace tessera::search::testing {
namespace {

namespace fs = std::filesystem;
using tessera::testing::TestRequest;
using tessera::testing::TestServer;

constexpr double kInputPerMtok = 10.0;  // the priced test model, USD per million tokens
constexpr double kOutputPerMtok = 30.0;
constexpr int kMaxTokens = 1000;

class CaptureProgress final : public ProgressSink {
public:
  void update(const ProgressSnapshot& s) override { last = progress_text(s); }
  void finish(const ProgressSnapshot& s) override { last = progress_text(s); }
  void message(const std::string& line) override { messages += line + "\n"; }
  std::string last, messages;
};

agent::EndpointConfig endpoint(const TestServer& server, const std::string& name, const std::string& model) {
  agent::EndpointConfig e;
  e.name = name;
  e.base_url = server.base_url();
  e.model = model;
  e.api_key_env = "";
  e.max_tokens = kMaxTokens;
  e.retry.max_attempts = 1;
  return e;
}

struct LlmRun {
  std::vector<agent::EndpointConfig> endpoints;
  agent::PriceTable prices;
  std::shared_ptr<agent::Budget> spend;
  CaptureProgress progress;
};

// One endpoint of a model with a price, so a cost budget applies.
LlmRun priced_run(const TestServer& server) {
  LlmRun run;
  run.endpoints = {endpoint(server, "", "priced-model")};
  run.prices.set("priced-model", agent::Price{kInputPerMtok, kOutputPerMtok});
  return run;
}

RunSummary run_llm(const SearchConfig& config, const fs::path& dir, LlmRun& run) {
  agent::ProposerOptions po;
  po.llm = agent::LlmProposerOptions{};
  po.llm->endpoints = run.endpoints;
  po.llm->client.prices = &run.prices;
  po.llm->budget = run.spend;
  std::vector<std::unique_ptr<Evaluator>> evals;
  evals.push_back(std::make_unique<FakeEvaluator>());
  EngineOptions opts;
  opts.run_dir = dir;
  opts.progress = &run.progress;
  opts.spend = run.spend;
  SearchEngine engine(config, {task_from_shape("1024x1024x1024")},
                      {make_slot(agent::ProposerRegistry::builtin().build("llm", po))}, std::move(evals), opts);
  return engine.run();
}

TEST(LlmSearch, ErrorsNoRetryCanFixAreShownAtOnceAndStopTheRun) {
  TestServer server([](const TestRequest&, int) { return tessera::testing::error_reply(401, "Incorrect API key provided: sk-bad"); });
  LlmRun run;
  run.endpoints = {endpoint(server, "", "coder")};
  const auto summary = run_llm(small_config("evolve", 20), fresh_dir("fail_fast"), run);
  EXPECT_EQ(summary.stop_reason, "proposer_errors");
  // The third failure in a row stops planning; the steps in flight finish.
  EXPECT_GE(summary.totals.steps, kMaxPermanentFailuresInARow);
  EXPECT_LE(summary.totals.steps, kMaxPermanentFailuresInARow + 2);
  EXPECT_EQ(server.requests().size(), std::size_t(summary.totals.steps)) << "not retried";
  EXPECT_NE(run.progress.messages.find("step 0: proposer 'llm' failed and no retry can fix it"), std::string::npos)
      << run.progress.messages;
  EXPECT_NE(run.progress.messages.find("Incorrect API key provided: sk-bad"), std::string::npos) << run.progress.messages;
  EXPECT_NE(run.progress.messages.find("step 1: proposer 'llm' failed again the same way"), std::string::npos)
      << "the same error is shown in full once\n" << run.progress.messages;
  EXPECT_NE(run.progress.messages.find("stopping: 3 proposals of 'llm' in a row"), std::string::npos)
      << run.progress.messages;
}

TEST(LlmSearch, TransientErrorsKeepTheirRetriesAndDoNotStopTheRun) {
  TestServer server([](const TestRequest&, int) { return tessera::testing::respond(503, "{}"); });
  LlmRun run;
  run.endpoints = {endpoint(server, "", "coder")};
  run.endpoints[0].retry.max_attempts = 2;
  run.endpoints[0].retry.initial_backoff = agent::Millis(1);
  const auto summary = run_llm(small_config("evolve", 5), fresh_dir("transient"), run);
  EXPECT_EQ(summary.stop_reason, "budget_evals");
  EXPECT_EQ(summary.totals.proposal_failures, 5);
  EXPECT_EQ(server.requests().size(), 10u);
  EXPECT_EQ(run.progress.messages.find("no retry can fix"), std::string::npos) << run.progress.messages;
}

// The budget is a ceiling: each call reserves its worst case (the prompt's
// byte bound and max_tokens, priced) before it is sent.
TEST(LlmSearch, ACostBudgetIsNeverExceeded) {
  TestServer server(tessera::testing::distinct_kernels());
  LlmRun run = priced_run(server);
  auto cfg = small_config("evolve", 200);
  cfg.budget.usd = 0.6;
  run.spend = std::make_shared<agent::Budget>(0, cfg.budget.usd);
  const auto summary = run_llm(cfg, fresh_dir("usd_budget"), run);
  EXPECT_EQ(summary.stop_reason, "budget_usd");
  EXPECT_GE(summary.totals.steps, 3);
  EXPECT_LT(summary.totals.steps, 200);
  EXPECT_LE(summary.totals.cost_usd, cfg.budget.usd);
  EXPECT_LE(run.spend->usd_spent(), cfg.budget.usd);
  EXPECT_NEAR(run.spend->usd_spent(), summary.totals.cost_usd, 1e-9);
  EXPECT_NE(run.progress.messages.find("the LLM budget refused the next call"), std::string::npos) << run.progress.messages;
}

// A resumed run counts what the earlier session spent before its first call.
TEST(LlmSearch, AResumedRunKeepsTheBudgetOfTheWholeRun) {
  TestServer server(tessera::testing::distinct_kernels());
  LlmRun first = priced_run(server);
  auto cfg = small_config("evolve", 4);
  const auto dir = fresh_dir("usd_resume");
  const auto before = run_llm(cfg, dir, first);
  ASSERT_EQ(before.totals.steps, 4);
  LlmRun second = priced_run(server);
  cfg.budget.evals = 100;
  cfg.budget.usd = before.totals.cost_usd * 1.5;
  second.spend = std::make_shared<agent::Budget>(0, cfg.budget.usd);
  const auto after = run_llm(cfg, dir, second);
  EXPECT_EQ(after.stop_reason, "budget_usd");
  EXPECT_LE(after.totals.cost_usd, cfg.budget.usd);
  EXPECT_LT(after.totals.steps, 10) << "the resumed session had half the first session's spend left";
}

// A model that repeats an evaluated kernel is told which step it repeated,
// asked warmer, from the second re-ask with the rewrite strategy; the repeats
// are counted in the totals, the progress line and the report.
TEST(LlmSearch, RepeatsAreFedBackAndCounted) {
  std::atomic<int> calls{0};
  TestServer server([&](const TestRequest& r, int) {
    const int n = calls++;
    return tessera::testing::billed_reply(r, tessera::testing::kernel_reply(n < 3 ? 0 : n));
  });
  LlmRun run;
  run.endpoints = {endpoint(server, "", "coder")};
  auto cfg = small_config("evolve", 3);
  cfg.pipeline_depth = 1;  // one proposal at a time: the server sees the steps in order
  cfg.temperature = 0.5;
  const auto dir = fresh_dir("repeats");
  const auto summary = run_llm(cfg, dir, run);
  EXPECT_EQ(summary.totals.repeated_proposals, 2);
  EXPECT_EQ(summary.totals.duplicates, 0) << "the second re-ask gave a new kernel";
  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 5u);  // step 0, step 1 three times, step 2
  const auto asked = [&](int i) { return tessera::testing::parse_chat(reqs[i]); };
  EXPECT_EQ(asked(1).user.find("repeated step"), std::string::npos);
  EXPECT_NE(asked(2).user.find("Your previous answer repeated step 0"), std::string::npos) << asked(2).user;
  EXPECT_NEAR(asked(1).body["temperature"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(asked(2).body["temperature"].get<double>(), 0.5 + agent::kReaskTemperatureStep, 1e-9);
  EXPECT_NEAR(asked(3).body["temperature"].get<double>(), 0.5 + 2 * agent::kReaskTemperatureStep, 1e-9);
  const auto recs = records(dir);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[1]["novelty_rejects"].size(), 2u);
  EXPECT_EQ(recs[1]["proposer_info"]["strategy"], "rewrite");
  EXPECT_EQ(recs[1]["proposer_info"]["reask"], 2);
  EXPECT_NE(run.progress.last.find("2 repeats"), std::string::npos) << run.progress.last;
  const std::string report = read_file(write_report(load_run(dir)));
  EXPECT_NE(report.find("2 proposal(s) repeated a kernel"), std::string::npos);
}

TEST(LlmSearch, TheBanditChoosesAmongAnEnsemblesModels) {
  TestServer server(tessera::testing::distinct_kernels());
  LlmRun run;
  run.endpoints = {endpoint(server, "alpha", "model-a"), endpoint(server, "beta", "model-b")};
  const auto dir = fresh_dir("ensemble");
  const auto summary = run_llm(small_config("bandit", 24), dir, run);
  EXPECT_EQ(summary.totals.steps, 24);
  std::map<std::string, int> asked;
  for (const auto& r : server.requests()) ++asked[tessera::testing::parse_chat(r).model];
  EXPECT_GT(asked["model-a"], 0);
  EXPECT_GT(asked["model-b"], 0);
  const std::string report = read_file(write_report(load_run(dir)));
  EXPECT_NE(report.find("| llm:alpha/tiling |"), std::string::npos) << report;
  EXPECT_NE(report.find("| llm:beta/tiling |"), std::string::npos) << report;
  EXPECT_NE(report.find("| llm | alpha |"), std::string::npos) << report;
  EXPECT_NE(report.find("| llm | beta |"), std::string::npos) << report;
}

}  // namespace
}  // namespace tessera::search::testing
