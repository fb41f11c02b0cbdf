// Every request ends with a result or a typed error: idempotency keys,
// the bounded queue, deadlines, dying evaluators and draining.
#include <gtest/gtest.h>

#include <thread>

#include "fakes.hpp"

namespace tessera::serve::testing {
namespace {

using namespace std::chrono_literals;
nlohmann::json body_of(const HttpResponse& r) { return nlohmann::json::parse(r.body); }

bool has_header(const HttpResponse& r, const std::string& name, const std::string& value) {
  for (const auto& [k, v] : r.headers)
    if (k == name && v == value) return true;
  return false;
}

// Waits until `n` evaluations are inside an evaluator (they block on the gate).
void wait_running(Ledger& l, int n) {
  for (int i = 0; i < 2000 && l.running < n; ++i) std::this_thread::sleep_for(5ms);
  ASSERT_GE(l.running, n);
}

TEST(Idempotency, ARepeatedRequestReplaysTheFirstAnswerAndIsNotEvaluatedAgain) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  const std::map<std::string, std::string> key = {{"idempotency-key", "req-1"}};
  const auto a = call(s, "POST", "/v1/evaluate", eval_body("kernel"), key);
  const auto b = call(s, "POST", "/v1/evaluate", eval_body("kernel"), key);
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(b.status, 200);
  EXPECT_EQ(a.body, b.body);
  EXPECT_TRUE(has_header(b, "Idempotent-Replayed", "true"));
  EXPECT_EQ(ledger->count("kernel"), 1);
  // Without a key the same request is evaluated again.
  (void)call(s, "POST", "/v1/evaluate", eval_body("kernel"));
  EXPECT_EQ(ledger->count("kernel"), 2);
}

TEST(Idempotency, ARepeatWhileTheFirstRunsWaitsForTheSameAnswer) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  const std::map<std::string, std::string> key = {{"idempotency-key", "req-2"}};
  auto first = call_async(s, "POST", "/v1/evaluate", eval_body("block k"), key);
  wait_running(*ledger, 1);
  auto second = call_async(s, "POST", "/v1/evaluate", eval_body("block k"), key);
  EXPECT_EQ(second.wait_for(100ms), std::future_status::timeout) << "answered before the work ended";
  ledger->gate.set_value();
  const auto a = first.get(), b = second.get();
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, b.body);
  EXPECT_EQ(ledger->count("block k"), 1);
}

TEST(Idempotency, AKeyReusedForADifferentRequestIs422) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  const std::map<std::string, std::string> key = {{"idempotency-key", "req-3"}};
  ASSERT_EQ(call(s, "POST", "/v1/evaluate", eval_body("one"), key).status, 200);
  const auto r = call(s, "POST", "/v1/evaluate", eval_body("two"), key);
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(body_of(r)["error"]["type"], "idempotency_conflict");
  EXPECT_EQ(ledger->count("two"), 0);
  EXPECT_EQ(call(s, "POST", "/v1/evaluate", eval_body("x"), {{"idempotency-key", std::string(300, 'k')}}).status, 400);
}

TEST(Overload, AFullQueueAnswers429WithRetryAfterAndRecovers) {
  auto ledger = std::make_shared<Ledger>();
  auto o = test_options();
  o.queue_capacity = 2;
  o.retry_after_s = 3;
  Service s(o, fake_backend(ledger));
  auto a = call_async(s, "POST", "/v1/evaluate", eval_body("block 1"));
  auto b = call_async(s, "POST", "/v1/evaluate", eval_body("block 2"));
  wait_running(*ledger, 1);
  const auto refused = call(s, "POST", "/v1/evaluate", eval_body("c"));
  EXPECT_EQ(refused.status, 429);
  EXPECT_TRUE(has_header(refused, "Retry-After", "3"));
  EXPECT_EQ(body_of(refused)["error"]["type"], "overloaded");
  // A batch is admitted whole or not at all.
  const auto batch = call(s, "POST", "/v1/evaluate/batch", R"({"items":[{"task":"64x64x64","action":"d"}]})");
  EXPECT_EQ(batch.status, 429);
  EXPECT_NE(s.metrics_text().find("tessera_refused_total{reason=\"overloaded\"} 2"), std::string::npos);
  ledger->gate.set_value();
  EXPECT_EQ(a.get().status, 200);
  EXPECT_EQ(b.get().status, 200);
  EXPECT_EQ(call(s, "POST", "/v1/evaluate", eval_body("c")).status, 200);
  EXPECT_EQ(ledger->count("c"), 1);
}

TEST(Deadline, ARequestPastItsDeadlineIs504AndItsAnswerStaysForTheKey) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  const std::map<std::string, std::string> h = {{"x-tessera-deadline", "0.2"}, {"idempotency-key", "slow"}};
  const auto r = call(s, "POST", "/v1/evaluate", eval_body("block slow"), h);
  EXPECT_EQ(r.status, 504);
  EXPECT_EQ(body_of(r)["error"]["type"], "deadline_exceeded");
  ledger->gate.set_value();
  EXPECT_TRUE(s.wait_drained(30s));
  const auto again = call(s, "POST", "/v1/evaluate", eval_body("block slow"), h);
  EXPECT_EQ(again.status, 200) << "the retry gets the finished answer";
  EXPECT_EQ(ledger->count("block slow"), 1);
}

TEST(Deadline, WorkWhoseDeadlinePassesInTheQueueNeverRuns) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  auto blocker = call_async(s, "POST", "/v1/evaluate", eval_body("block b"));
  wait_running(*ledger, 1);
  const auto r = call(s, "POST", "/v1/evaluate", eval_body("queued"), {{"x-tessera-deadline", "0.1"}});
  EXPECT_EQ(r.status, 504);
  ledger->gate.set_value();
  EXPECT_EQ(blocker.get().status, 200);
  EXPECT_TRUE(s.wait_drained(30s));
  EXPECT_EQ(ledger->count("queued"), 0);
  EXPECT_EQ(call(s, "POST", "/v1/evaluate", eval_body("x"), {{"x-tessera-deadline", "soon"}}).status, 400);
}

TEST(WorkerDeath, AKilledWorkerIsReplacedAndItsRequestRetriedOnce) {
  auto ledger = std::make_shared<Ledger>();
  auto o = test_options();
  o.fault_injection = true;
  Service s(o, fake_backend(ledger));
  ASSERT_EQ(call(s, "POST", "/v1/admin/kill_worker", R"({"worker":0})").status, 200);
  const auto r = call(s, "POST", "/v1/evaluate", eval_body("k"));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(body_of(r)["status"], "ok");
  EXPECT_EQ(body_of(r)["attempts"].size(), 2u);
  EXPECT_EQ(ledger->made, 2) << "a fresh evaluator replaced the dead one";
  EXPECT_NE(s.metrics_text().find("tessera_worker_replacements_total 1"), std::string::npos);
  EXPECT_EQ(call(s, "POST", "/v1/admin/kill_worker", R"({"worker":5})").status, 400);
}

TEST(WorkerDeath, DyingOnTheFreshWorkerTooIsAMaskedInfraError) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  const auto j = body_of(call(s, "POST", "/v1/evaluate", eval_body("throw")));
  EXPECT_EQ(j["status"], "infra_error");
  EXPECT_TRUE(j["masked"].get<bool>());
  EXPECT_TRUE(j["reward"]["scalar"].is_null());
  EXPECT_EQ(j["attempts"].size(), 2u);
  EXPECT_EQ(ledger->count("throw"), 2);
  EXPECT_EQ(call(s, "POST", "/v1/evaluate", eval_body("fine")).status, 200) << "the slot works again";
}

TEST(WorkerDeath, KillWorkerExistsOnlyWithFaultInjection) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  EXPECT_EQ(call(s, "POST", "/v1/admin/kill_worker", R"({"worker":0})").status, 404);
}

TEST(Drain, InFlightRequestsFinishAndNewOnesGet503) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  auto running = call_async(s, "POST", "/v1/evaluate", eval_body("block r"));
  wait_running(*ledger, 1);
  s.begin_drain();
  const auto refused = call(s, "POST", "/v1/evaluate", eval_body("new"));
  EXPECT_EQ(refused.status, 503);
  EXPECT_TRUE(refused.close);
  EXPECT_EQ(call(s, "GET", "/healthz").status, 503);
  EXPECT_FALSE(s.wait_drained(50ms));
  ledger->gate.set_value();
  EXPECT_EQ(running.get().status, 200);
  EXPECT_TRUE(s.wait_drained(30s));
  EXPECT_EQ(ledger->count("new"), 0);
}

TEST(Sessions, AnEpisodeRunsThroughCreateStepGetAndDelete) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  const auto created = call(s, "POST", "/v1/sessions", R"({"task":"256x128x64","seed":7})");
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string id = body_of(created)["session_id"];
  EXPECT_EQ(id.size(), 32u);
  EXPECT_EQ(body_of(created)["info"]["seed"], 7);
  const std::string at = "/v1/sessions/" + id;
  const auto step = call(s, "POST", at + "/step", R"({"action":"k1"})");
  ASSERT_EQ(step.status, 200) << step.body;
  EXPECT_EQ(body_of(step)["reward"], 1.4);
  EXPECT_FALSE(body_of(step)["terminated"].get<bool>());
  EXPECT_EQ(body_of(call(s, "POST", at + "/step", R"({"action":"not a kernel"})"))["reward"], -1.0);
  EXPECT_TRUE(body_of(call(s, "POST", at + "/step", R"({"action":"k3"})"))["terminated"].get<bool>());
  EXPECT_EQ(body_of(call(s, "POST", at + "/step", R"({"action":"k4"})"))["error"]["type"], "episode_done");
  const auto got = body_of(call(s, "GET", at));
  EXPECT_EQ(got["turn"], 3);
  EXPECT_EQ(got["session_id"], id);
  EXPECT_EQ(ledger->total(), 2);
  EXPECT_EQ(call(s, "DELETE", at).status, 200);
  EXPECT_EQ(call(s, "GET", at).status, 404);
  EXPECT_EQ(call(s, "POST", at + "/step", R"({"action":"k"})").status, 404);
  EXPECT_NE(s.metrics_text().find("tessera_evaluations_total{status=\"format_error\"} 1"), std::string::npos);
}

TEST(Sessions, BadInputIs400AndOneStepRunsAtATime) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  EXPECT_EQ(call(s, "POST", "/v1/sessions", R"({"options":{"bad":1}})").status, 400);
  EXPECT_EQ(call(s, "POST", "/v1/sessions", R"({"seed":-1})").status, 400);
  EXPECT_EQ(call(s, "POST", "/v1/sessions", R"({"tsak":"64x64x64"})").status, 400);
  const std::string id = body_of(call(s, "POST", "/v1/sessions", ""))["session_id"];
  auto first = call_async(s, "POST", "/v1/sessions/" + id + "/step", R"({"action":"block"})");
  wait_running(*ledger, 1);
  const auto second = call(s, "POST", "/v1/sessions/" + id + "/step", R"({"action":"other"})");
  EXPECT_EQ(second.status, 409);
  EXPECT_EQ(body_of(second)["error"]["type"], "step_in_progress");
  ledger->gate.set_value();
  EXPECT_EQ(first.get().status, 200);
  EXPECT_EQ(call(s, "POST", "/v1/sessions/" + id + "/step", R"({"action":"other"})").status, 200);
  EXPECT_EQ(call(s, "PUT", "/v1/sessions/" + id, "").status, 405);
}

TEST(Sessions, AnIdleSessionExpires) {
  auto ledger = std::make_shared<Ledger>();
  auto o = test_options();
  o.session_ttl_s = 0.05;
  Service s(o, fake_backend(ledger));
  const std::string id = body_of(call(s, "POST", "/v1/sessions", "{}"))["session_id"];
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(call(s, "GET", "/v1/sessions/" + id).status, 404);
}

TEST(Sessions, ARepeatedStepWithItsKeyIsNotASecondTurn) {
  auto ledger = std::make_shared<Ledger>();
  Service s(test_options(), fake_backend(ledger));
  const std::string id = body_of(call(s, "POST", "/v1/sessions", "{}"))["session_id"];
  const std::map<std::string, std::string> key = {{"idempotency-key", "turn-1"}};
  const auto a = call(s, "POST", "/v1/sessions/" + id + "/step", R"({"action":"k"})", key);
  const auto b = call(s, "POST", "/v1/sessions/" + id + "/step", R"({"action":"k"})", key);
  EXPECT_EQ(a.body, b.body);
  EXPECT_EQ(body_of(call(s, "GET", "/v1/sessions/" + id))["turn"], 1);
}

}  // namespace
}  // namespace tessera::serve::testing
