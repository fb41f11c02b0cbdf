// `tessera search` with LLM endpoints from a file, as a user runs it, against
// the loopback server in compile-only mode (the sandboxed compiler, no GPU).
#include <gtest/gtest.h>

#include "engine_helpers.hpp"
#include "core/fs.hpp"
#include "tests/agent/test_server.hpp"

namespace tessera::search::testing {
namespace {

namespace fs = std::filesystem;
using tessera::testing::TestRequest;
using tessera::testing::TestServer;
using tessera::testing::run_tessera;

// No endpoint variables reach the child: what it uses comes from its
// arguments and the run directory.
const std::string kNoEndpointEnv = "-u TESSERA_LLM_BASE_URL -u TESSERA_LLM_MODEL -u TESSERA_LLM_API_KEY_ENV";

fs::path endpoints_file(const fs::path& dir, const std::vector<nlohmann::json>& endpoints) {
  const fs::path p = dir / "endpoints.json";
  atomic_write_file(p, nlohmann::json{{"endpoints", endpoints}}.dump(2));
  return p;
}

nlohmann::json endpoint(const TestServer& server, const std::string& name, const std::string& model,
                        const std::string& key_env = "") {
  return {{"name", name}, {"base_url", server.base_url()}, {"model", model}, {"api_key_env", key_env}, {"max_tokens", 2000}};
}

#define REQUIRE_BINARY() \
  if (!fs::exists(TESSERA_BINARY)) GTEST_SKIP() << "the tessera binary is not built: " << TESSERA_BINARY

TEST(LlmSearchCli, A401StopsTheRunAtOnceWithTheServersMessage) {
  REQUIRE_BINARY();
  TestServer server([](const TestRequest&, int) { return tessera::testing::error_reply(401, "Incorrect API key provided: sk-bad"); });
  const auto dir = fresh_dir("cli_401");
  const auto cfg = endpoints_file(dir, {endpoint(server, "coder", "gpt-4o", "TESSERA_TEST_BAD_KEY")});
  std::string out;
  const int code = run_tessera("search --shape 256x256x256 --compile-only --config " + cfg.string() +
                                   " --budget-evals 20 --quiet --out " + (dir / "run").string(),
                               &out, kNoEndpointEnv + " TESSERA_TEST_BAD_KEY=sk-bad");
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("Incorrect API key provided: sk-bad"), std::string::npos) << out;
  EXPECT_NE(out.find("check $TESSERA_TEST_BAD_KEY"), std::string::npos) << out;
  EXPECT_NE(out.find("stopped: proposer_errors"), std::string::npos) << out;
  EXPECT_LE(server.requests().size(), std::size_t(kMaxPermanentFailuresInARow + 2)) << out;
  EXPECT_EQ(read_file(dir / "run" / "config.json").find("sk-bad"), std::string::npos) << "never the key";
}

TEST(LlmSearchCli, AResumeNeedsNoEndpointVariables) {
  REQUIRE_BINARY();
  TestServer server(tessera::testing::distinct_kernels());
  const auto dir = fresh_dir("cli_resume");
  const auto cfg = endpoints_file(dir, {endpoint(server, "coder", "local-coder", "TESSERA_TEST_KEY")});
  const std::string run_dir = (dir / "run").string();
  const std::string env = kNoEndpointEnv + " TESSERA_TEST_KEY=sk-test-resume";
  std::string out;
  ASSERT_EQ(run_tessera("search --shape 256x256x256 --compile-only --config " + cfg.string() +
                            " --budget-evals 2 --seed 3 --quiet --out " + run_dir, &out, env), 0) << out;
  fs::remove(cfg);  // the resume must not need it
  const std::string config = read_file(dir / "run" / "config.json");
  EXPECT_NE(config.find("\"api_key_env\": \"TESSERA_TEST_KEY\""), std::string::npos) << config;
  EXPECT_EQ(config.find("sk-test-resume"), std::string::npos) << "never the key";
  std::string resumed;
  ASSERT_EQ(run_tessera("search --resume " + run_dir + " --budget-evals 4 --quiet", &resumed, env), 0) << resumed;
  EXPECT_NE(resumed.find("2 steps resumed"), std::string::npos) << resumed;
  EXPECT_EQ(records(dir / "run").size(), 4u);
  const auto reqs = server.requests();
  ASSERT_GE(reqs.size(), 4u);
  for (const auto& r : reqs) EXPECT_EQ(r.headers.at("authorization"), "Bearer sk-test-resume");
}

TEST(LlmSearchCli, ACostBudgetNeedsEveryModelsPrice) {
  REQUIRE_BINARY();
  TestServer server([](const TestRequest& r, int) { return tessera::testing::billed_reply(r, "hi"); });
  const auto dir = fresh_dir("cli_unpriced");
  const auto cfg = endpoints_file(dir, {endpoint(server, "local", "my-local-llama")});
  std::string out;
  EXPECT_EQ(run_tessera("search --shape 256x256x256 --compile-only --config " + cfg.string() +
                            " --budget-usd 1 --quiet --out " + (dir / "run").string(), &out, kNoEndpointEnv), 2) << out;
  EXPECT_NE(out.find("'my-local-llama' (endpoint 'local') is not in the price table"), std::string::npos) << out;
  EXPECT_TRUE(server.requests().empty());
  out.clear();
  EXPECT_NE(run_tessera("search --shape 256x256x256 --compile-only --config " + cfg.string() +
                            " --proposers tile --quiet --out " + (dir / "tile").string(), &out, kNoEndpointEnv), 0);
  EXPECT_NE(out.find("do not include llm"), std::string::npos) << out;
}

// The acceptance run: 30 compile-only steps of the bandit over an
// ensemble of two models, every step proposed, compiled and recorded.
TEST(LlmSearchCli, AThirtyStepEnsembleSearchRunsClean) {
  REQUIRE_BINARY();
  TestServer server(tessera::testing::distinct_kernels());
  const auto dir = fresh_dir("cli_ensemble");
  const auto cfg = endpoints_file(dir, {endpoint(server, "alpha", "model-a"), endpoint(server, "beta", "model-b")});
  const std::string run_dir = (dir / "run").string();
  std::string out;
  ASSERT_EQ(run_tessera("search --shape 256x256x256 --compile-only --method bandit --config " + cfg.string() +
                            " --budget-evals 30 --seed 5 --quiet --out " + run_dir, &out, kNoEndpointEnv), 0) << out;
  EXPECT_NE(out.find("stopped: budget_evals after 30 steps"), std::string::npos) << out;
  EXPECT_EQ(out.find("\nsearch: "), std::string::npos) << "no message: nothing failed\n" << out;
  EXPECT_EQ(out.find("retrying"), std::string::npos) << out;
  const auto recs = records(run_dir);
  ASSERT_EQ(recs.size(), 30u);
  std::map<std::string, int> models;
  for (const auto& r : recs) {
    EXPECT_TRUE(r["proposal_ok"].get<bool>()) << r["proposal_error"];
    EXPECT_EQ(r["eval"]["status"], "compiled") << r["eval"].dump();
    ++models[r["plan"]["model"].get<std::string>()];
  }
  EXPECT_GT(models["alpha"], 0);
  EXPECT_GT(models["beta"], 0);
  const std::string report = read_file(fs::path(run_dir) / "report.md");
  EXPECT_NE(report.find("| llm:alpha/"), std::string::npos) << report;
  EXPECT_NE(report.find("| llm:beta/"), std::string::npos) << report;
  // Nothing was timed, and the export says so instead of writing 0 lines silently.
  std::string exported;
  ASSERT_EQ(run_tessera("export " + run_dir + " --format sft", &exported), 0) << exported;
  EXPECT_NE(exported.find("sft: 0 lines from 30 trajectory records"), std::string::npos) << exported;
  EXPECT_NE(exported.find("compile-only run measures nothing"), std::string::npos) << exported;
}

}  // namespace
}  // namespace tessera::search::testing
