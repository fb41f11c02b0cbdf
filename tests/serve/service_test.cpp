// The service through its transport-free entry point: routing, validation,
// authentication, evaluation records, batches and the OpenRLHF reward.
#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>

#include "fakes.hpp"

namespace tessera::serve::testing {
namespace {

nlohmann::json body_of(const HttpResponse& r) { return nlohmann::json::parse(r.body); }

TEST(Service, EvaluatesAnActionIntoARecordWithItsReward) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  const auto r = call(s, "POST", "/v1/evaluate", eval_body("kernel A"));
  ASSERT_EQ(r.status, 200) << r.body;
  const auto j = body_of(r);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["action_kind"], "device_only");
  EXPECT_FALSE(j["masked"].get<bool>());
  EXPECT_NEAR(j["reward"]["scalar"].get<double>(), 1.0 + std::log(1.5), 1e-9);
  EXPECT_EQ(j["result"]["status"], "ok");
  EXPECT_EQ(j["attempts"].size(), 1u);
  EXPECT_EQ(ledger->count("kernel A"), 1);
}

TEST(Service, AnActionThatIsNoKernelIsAFormatFailureAndIsNeverEvaluated) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  const auto j = body_of(call(s, "POST", "/v1/evaluate", eval_body("not a kernel")));
  EXPECT_EQ(j["status"], "format_error");
  EXPECT_EQ(j["format_error"], "no kernel in the action");
  EXPECT_EQ(j["reward"]["scalar"].get<double>(), kDefaultFormatPenalty);
  EXPECT_TRUE(j["result"].is_null());
  EXPECT_EQ(ledger->total(), 0);
}

TEST(Service, MalformedRequestsGetA4xxThatSaysWhat) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  struct Case {
    std::string method, target, body;
    int status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"POST", "/v1/evaluate", "{not json", 400, "not valid JSON"},
      {"POST", "/v1/evaluate", "[1,2]", 400, "must be a JSON object"},
      {"POST", "/v1/evaluate", R"({"task":"64x64x64"})", 400, "missing field 'action'"},
      {"POST", "/v1/evaluate", R"({"task":"64x64x64","action":"k","colour":"red"})", 400, "unknown field 'colour'"},
      {"POST", "/v1/evaluate", R"({"task":"64xAx64","action":"k"})", 400, "evaluate.task"},
      {"POST", "/v1/evaluate", R"({"task":{"m":-4},"action":"k"})", 400, "evaluate.task"},
      {"POST", "/v1/evaluate", R"({"task":"64x64x64","action":7})", 400, "must be a string"},
      {"POST", "/v1/evaluate", R"({"task":"64x64x64","action":"k","options":{"verify_trials":1}})", 400,
       "verify_trials"},
      {"POST", "/v1/evaluate", R"({"task":"64x64x64","action":"k","options":{"counter_set":"all"}})", 400,
       "counter_set"},
      {"GET", "/v1/evaluate", "", 405, "accepts POST"},
      {"POST", "/v1/nothing", "{}", 404, "no such endpoint"},
      {"POST", "/v1/evaluate/batch", R"({"items":[]})", 400, "non-empty array"},
      {"POST", "/v1/evaluate/batch", R"({"items":[{"task":"64x64x64"}]})", 400, "batch.items[0]"},
  };
  for (const auto& c : cases) {
    const auto r = call(s, c.method, c.target, c.body);
    EXPECT_EQ(r.status, c.status) << c.target << " " << c.body << " -> " << r.body;
    EXPECT_NE(body_of(r)["error"]["message"].get<std::string>().find(c.says), std::string::npos)
        << c.body << " -> " << r.body;
  }
  EXPECT_EQ(ledger->total(), 0);
  EXPECT_EQ(call(s, "GET", "/healthz").status, 200) << "the service still answers";
}

TEST(Service, ATooLargeBatchIs413AndNothingRuns) {
  auto ledger = std::make_shared<Ledger>();
  auto o = test_options();
  o.max_batch = 2;
  Service s(o, fake_backend(ledger));
  nlohmann::json items = nlohmann::json::array();
  for (int i = 0; i < 3; ++i) items.push_back({{"task", "64x64x64"}, {"action", fmt::format("k{}", i)}});
  const auto r = call(s, "POST", "/v1/evaluate/batch", nlohmann::json{{"items", items}}.dump());
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(body_of(r)["error"]["type"], "batch_too_large");
  EXPECT_EQ(ledger->total(), 0);
}

TEST(Service, BearerTokenGuardsEveryV1CallButNotHealthOrMetrics) {
  auto ledger = std::make_shared<Ledger>();
  auto o = test_options();
  o.token = "s3cret-token";
  Service s(o, fake_backend(ledger));
  EXPECT_EQ(call(s, "POST", "/v1/evaluate", eval_body("k")).status, 401);
  EXPECT_EQ(call(s, "POST", "/v1/evaluate", eval_body("k"), {{"authorization", "Bearer s3cret-tokeN"}}).status, 401);
  EXPECT_EQ(call(s, "POST", "/v1/evaluate", eval_body("k"), {{"authorization", "Bearer s3cret"}}).status, 401);
  EXPECT_EQ(call(s, "POST", "/v1/evaluate", eval_body("k"), {{"authorization", "Basic s3cret-token"}}).status, 401);
  EXPECT_EQ(call(s, "POST", "/get_reward", R"({"query":["k"],"labels":["64x64x64"]})").status, 401);
  EXPECT_EQ(ledger->total(), 0);
  EXPECT_EQ(call(s, "POST", "/v1/evaluate", eval_body("k"), {{"authorization", "Bearer s3cret-token"}}).status, 200);
  EXPECT_EQ(call(s, "GET", "/healthz").status, 200);
  EXPECT_EQ(call(s, "GET", "/metrics").status, 200);
}

TEST(Service, OpenRewardLetsOpenRlhfCallWithoutAToken) {
  auto ledger = std::make_shared<Ledger>();
  auto o = test_options();
  o.token = "t";
  o.open_reward = true;
  Service s(o, fake_backend(ledger));
  EXPECT_EQ(call(s, "POST", "/get_reward", R"({"query":["k"],"labels":["64x64x64"]})").status, 200);
  EXPECT_EQ(call(s, "POST", "/v1/evaluate", eval_body("k")).status, 401);
}

TEST(Service, BatchAnswersInRequestOrderWithEveryStatus) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger, 2));
  const std::vector<std::string> actions = {"wait:30 a", "compile_error b", "not a kernel", "rejected c", "d"};
  nlohmann::json items = nlohmann::json::array();
  for (const auto& a : actions) items.push_back({{"task", "64x64x64"}, {"action", a}});
  const auto r = call(s, "POST", "/v1/evaluate/batch", nlohmann::json{{"items", items}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const auto res = body_of(r)["results"];
  ASSERT_EQ(res.size(), actions.size());
  const std::vector<std::string> want = {"ok", "compile_error", "format_error", "rejected", "ok"};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(res[i]["status"], want[i]) << i;
  EXPECT_EQ(ledger->total(), 4);
}

TEST(Service, GetRewardSpeaksOpenRlhfsProtocol) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  const nlohmann::json req = {{"query", {"PROMPT kernel X<|im_end|>", "PROMPT not a kernel", "PROMPT infra Y"}},
                              {"prompts", {"PROMPT ", "PROMPT ", "PROMPT "}},
                              {"labels", {"64x64x64", R"({"op":"hgemm","m":64,"n":64,"k":64})", "64x64x64"}}};
  const auto r = call(s, "POST", "/get_reward", req.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const auto j = body_of(r);
  ASSERT_EQ(j["rewards"].size(), 3u);
  EXPECT_NEAR(j["rewards"][0].get<double>(), 1.0 + std::log(1.5), 1e-9);
  EXPECT_EQ(j["rewards"][1].get<double>(), kDefaultFormatPenalty);
  EXPECT_EQ(j["rewards"][2].get<double>(), kDefaultMaskedReward) << "masked: no penalty";
  EXPECT_EQ(j["scores"], nlohmann::json({1.0, 0.0, 0.0}));
  EXPECT_EQ(j["extra_logs"]["masked"], nlohmann::json({0, 0, 1}));
  EXPECT_EQ(j["extra_logs"]["format_ok"], nlohmann::json({1, 0, 1}));
  EXPECT_EQ(ledger->count("kernel X"), 1) << "the prompt and the end-of-turn token are not part of the action";
}

TEST(Service, GetRewardChecksItsLists) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  EXPECT_EQ(call(s, "POST", "/get_reward", R"({"query":["a","b"],"labels":["64x64x64"]})").status, 400);
  EXPECT_EQ(call(s, "POST", "/get_reward", R"({"query":["a"]})").status, 400) << "no label and no --task";
  EXPECT_EQ(call(s, "POST", "/get_reward", R"({"query":"a"})").status, 400);
  EXPECT_EQ(call(s, "POST", "/get_reward", R"({"query":[1],"labels":["64x64x64"]})").status, 400);
  auto o = test_options();
  o.default_task = task_from_shape("64x64x64");
  Service with_task(o, fake_backend(ledger));
  EXPECT_EQ(call(with_task, "POST", "/get_reward", R"({"query":["a"],"prompts":null,"labels":null})").status, 200);
}

TEST(Service, MetricsReportStatusesStagesQueueAndBusyPerGpu) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger, 2));
  ASSERT_EQ(call(s, "POST", "/v1/evaluate", eval_body("a")).status, 200);
  ASSERT_EQ(call(s, "POST", "/v1/evaluate", eval_body("rejected b")).status, 200);
  ASSERT_EQ(call(s, "POST", "/v1/evaluate", eval_body("infra c")).status, 200);
  ASSERT_EQ(call(s, "POST", "/v1/evaluate", eval_body("not a kernel")).status, 200);
  const auto m = call(s, "GET", "/metrics");
  EXPECT_EQ(m.content_type.rfind("text/plain; version=0.0.4", 0), 0u);
  for (const char* line :
       {"tessera_evaluations_total{status=\"ok\"} 1", "tessera_evaluations_total{status=\"rejected\"} 1",
        "tessera_evaluations_total{status=\"infra_error\"} 1", "tessera_evaluations_total{status=\"format_error\"} 1",
        "tessera_masked_fraction 0.25", "tessera_rejected_fraction 0.25",
        "tessera_stage_seconds_count{stage=\"queue\"} 3", "tessera_stage_seconds_count{stage=\"verify\"} 3",
        "tessera_stage_seconds_count{stage=\"time\"} 3", "tessera_stage_seconds_count{stage=\"total\"} 4",
        "tessera_stage_seconds_bucket{stage=\"compile\",le=\"0.0025\"}", "tessera_gpu_busy_fraction{gpu=\"0\"}",
        "tessera_gpu_busy_fraction{gpu=\"1\"}", "tessera_queue_depth 0", "tessera_queue_capacity 16",
        "tessera_requests_total{endpoint=\"evaluate\",code=\"200\"} 4"})
    EXPECT_NE(m.body.find(line), std::string::npos) << line << "\n" << m.body;
}

}  // namespace
}  // namespace tessera::serve::testing
