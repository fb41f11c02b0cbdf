// What the LLM proposer tells its caller on failure, how it learns the
// tokenizer's ratio, how it re-asks after a repeat, and what a run keeps of
// its endpoints.
#include <gtest/gtest.h>

#include "agent/llm_proposer.hpp"
#include "core/error.hpp"
#include "tests/agent/test_server.hpp"

namespace tessera::agent {
namespace {

using testing::TestRequest;
using testing::TestServer;

ProposalContext from_scratch() {
  ProposalContext c;
  c.task.m = c.task.n = c.task.k = 1024;
  c.strategy = "tiling";
  c.seed = 7;
  return c;
}

LlmProposerOptions options_for(const TestServer& server, const std::string& model = "coder") {
  EndpointConfig e;
  e.base_url = server.base_url();
  e.model = model;
  e.api_key_env = "";
  e.retry.max_attempts = 2;
  e.retry.initial_backoff = Millis(1);
  LlmProposerOptions o;
  o.endpoints = {e};
  return o;
}

Proposal propose_once(TestServer& server, const ProposalContext& c = from_scratch()) {
  return make_llm_proposer(options_for(server))->propose(c);
}

TEST(LlmProposerFailures, ErrorsNoRetryCanFixArePermanentAndCarryTheServersMessage) {
  TestServer bad_key([](const TestRequest&, int) { return testing::error_reply(401, "Incorrect API key provided: sk-bad"); });
  Proposal p = propose_once(bad_key);
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.failure, ProposalFailure::permanent);
  EXPECT_NE(p.error.find("Incorrect API key provided: sk-bad"), std::string::npos) << p.error;
  EXPECT_EQ(p.proposer_info["failure"], "permanent");
  EXPECT_EQ(bad_key.requests().size(), 1u) << "not retried";

  TestServer no_model([](const TestRequest&, int) { return testing::error_reply(404, "The model 'coder' does not exist"); });
  p = propose_once(no_model);
  EXPECT_EQ(p.failure, ProposalFailure::permanent);
  EXPECT_NE(p.error.find("does not exist"), std::string::npos) << p.error;

  auto c = from_scratch();
  c.model = "no-such-arm";
  p = propose_once(no_model, c);
  EXPECT_EQ(p.failure, ProposalFailure::permanent);
  EXPECT_NE(p.error.find("unknown model arm"), std::string::npos) << p.error;
}

TEST(LlmProposerFailures, OtherFailuresAreTransient) {
  TestServer down([](const TestRequest&, int) { return testing::respond(503, "{}"); });
  Proposal p = propose_once(down);
  EXPECT_EQ(p.failure, ProposalFailure::transient);
  EXPECT_EQ(down.requests().size(), 2u) << "retried as before";
  TestServer prose([](const TestRequest& r, int) { return testing::billed_reply(r, "No code today."); });
  p = propose_once(prose);
  EXPECT_EQ(p.failure, ProposalFailure::transient);
  TestServer fine([](const TestRequest& r, int) { return testing::billed_reply(r, testing::kernel_reply(0)); });
  p = propose_once(fine);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.failure, ProposalFailure::none);
}

TEST(LlmProposerFailures, ABudgetRefusalSaysWhichLimit) {
  TestServer server([](const TestRequest& r, int) { return testing::billed_reply(r, testing::kernel_reply(0)); });
  auto o = options_for(server);
  o.budget = std::make_shared<Budget>(100, 0);  // less than any prompt
  const Proposal p = make_llm_proposer(o)->propose(from_scratch());
  EXPECT_EQ(p.failure, ProposalFailure::budget);
  EXPECT_EQ(p.proposer_info["budget_limit"], "tokens");
  EXPECT_TRUE(server.requests().empty());
}

TEST(TokenRatio, StartsAtTheCodeRatioAndLearnsFromUsage) {
  EXPECT_DOUBLE_EQ(kCharsPerToken, 3.2);
  EXPECT_EQ(approx_tokens(std::string(320, 'x')), 100u);
  EXPECT_EQ(approx_tokens(std::string(321, 'x')), 101u);
  TokenRatio r;
  EXPECT_DOUBLE_EQ(r.chars_per_token(), kCharsPerToken);
  r.observe(1000, 0);  // a reply without usage teaches nothing
  EXPECT_EQ(r.observations(), 0);
  for (int i = 0; i < 20; ++i) r.observe(20000, 10000);  // a tokenizer at 2 characters per token
  EXPECT_EQ(r.observations(), 20);
  EXPECT_NEAR(r.chars_per_token(), 2.0, 0.03);
  TokenRatio silly;
  silly.observe(10, 1000000);
  EXPECT_GE(silly.chars_per_token(), kMinCharsPerToken);
}

// A model whose tokenizer makes twice as many tokens as the starting ratio
// assumes: after its first reply the prompt is trimmed to the real budget.
TEST(TokenRatio, TheProposerTrimsToTheRatioItsRepliesReport) {
  TestServer server([](const TestRequest& r, int) { return testing::billed_reply(r, testing::kernel_reply(0), 1.6); });
  ProposalContext c = from_scratch();
  for (int i = 0; i < 3; ++i) {
    Evaluated e;
    e.candidate.name = "elite_" + std::to_string(i);
    e.candidate.source = "// inspiration " + std::to_string(i) + "\n" + std::string(5000, 'e');
    e.result.status = Status::ok;
    c.inspirations.push_back(e);
  }
  auto o = options_for(server);
  o.prompt.max_inspirations = 3;
  const auto full = PromptBuilder(o.prompt).build(c);
  const std::size_t chars = full[0].content.size() + full[1].content.size();
  o.prompt.max_prompt_tokens = approx_tokens(std::string(chars, ' ')) + 20;  // fits at 3.2 characters per token
  auto proposer = make_llm_proposer(o);
  const Proposal first = proposer->propose(c);
  const Proposal second = proposer->propose(c);
  ASSERT_TRUE(first.ok && second.ok) << first.error << second.error;
  EXPECT_DOUBLE_EQ(first.proposer_info["chars_per_token"].get<double>(), kCharsPerToken);
  EXPECT_LT(second.proposer_info["chars_per_token"].get<double>(), 2.5);
  EXPECT_NE(first.messages[1].content.find("// inspiration 2"), std::string::npos);
  EXPECT_EQ(second.messages[1].content.find("// inspiration 2"), std::string::npos) << "trimmed at the learned ratio";
}

TEST(Reask, TheModelIsToldWhichStepItRepeatedAndSampledWarmer) {
  TestServer server([](const TestRequest& r, int) { return testing::billed_reply(r, testing::kernel_reply(1)); });
  auto proposer = make_llm_proposer(options_for(server));
  ProposalContext c = from_scratch();
  c.temperature = 0.4;
  ASSERT_TRUE(proposer->propose(c).ok);
  c.repeated_step = 5;
  c.reask = 2;
  const Proposal p = proposer->propose(c);
  ASSERT_TRUE(p.ok) << p.error;
  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  const auto first = testing::parse_chat(reqs[0]), again = testing::parse_chat(reqs[1]);
  EXPECT_EQ(first.user.find("repeated step"), std::string::npos);
  EXPECT_NE(again.user.find("Your previous answer repeated step 5"), std::string::npos) << again.user;
  EXPECT_NEAR(first.body["temperature"].get<double>(), 0.4, 1e-9);
  EXPECT_NEAR(again.body["temperature"].get<double>(), 0.4 + 2 * kReaskTemperatureStep, 1e-9);
  EXPECT_EQ(p.proposer_info["reask"], 2);

  EXPECT_DOUBLE_EQ(reask_temperature(0.8, 0), 0.8);
  EXPECT_DOUBLE_EQ(reask_temperature(0.8, 1), 0.8 + kReaskTemperatureStep);
  EXPECT_DOUBLE_EQ(reask_temperature(1.1, 3), kMaxReaskTemperature);
  EXPECT_DOUBLE_EQ(reask_temperature(1.5, 2), 1.5) << "never cooler than asked";
}

TEST(EndpointRecord, KeepsEverySettingButNoSecret) {
  EndpointConfig e;
  e.name = "fast";
  e.base_url = "http://127.0.0.1:8000/v1";
  e.model = "qwen";
  e.api_key_env = "MY_KEY";
  e.temperature = 0.3;
  e.max_tokens = 4096;
  e.extra_body = {{"top_k", 20}};
  e.extra_headers = {{"HTTP-Referer", "https://example.org"}, {"Authorization", "Bearer sk-secret"}, {"X-Api-Key", "k"}};
  e.total_timeout_s = 120;
  e.retry.max_attempts = 3;
  e.max_concurrency = 2;
  e.requests_per_second = 1.5;
  e.weight = 2;
  const nlohmann::json j = to_json(e);
  EXPECT_EQ(j.dump().find("sk-secret"), std::string::npos);
  EXPECT_EQ(j["redacted_headers"], (nlohmann::json{"Authorization", "X-Api-Key"}));
  std::vector<std::string> redacted;
  const EndpointConfig back = endpoint_from_record(j, &redacted);
  EXPECT_EQ(redacted, (std::vector<std::string>{"Authorization", "X-Api-Key"}));
  EXPECT_EQ(back.label(), "fast");
  EXPECT_EQ(back.api_key_env, "MY_KEY");
  EXPECT_EQ(*back.temperature, 0.3);
  EXPECT_EQ(*back.max_tokens, 4096);
  EXPECT_EQ(back.extra_body, e.extra_body);
  EXPECT_EQ(back.extra_headers, (std::map<std::string, std::string>{{"HTTP-Referer", "https://example.org"}}));
  EXPECT_EQ(back.total_timeout_s, 120);
  EXPECT_EQ(back.retry.max_attempts, 3);
  EXPECT_EQ(back.retry.initial_backoff, e.retry.initial_backoff);
  EXPECT_EQ(back.max_concurrency, 2);
  EXPECT_EQ(back.requests_per_second, 1.5);
  EXPECT_EQ(back.weight, 2);
  nlohmann::json without_secrets = j;
  without_secrets.erase("redacted_headers");
  EXPECT_EQ(to_json(back), without_secrets) << "a second round trip changes nothing";

  LlmProposerOptions o;
  o.endpoints = {e, back};
  o.cache_mode = CacheMode::replay;
  o.cache_dir = "/tmp/llm-cache";
  const LlmProposerOptions again = llm_options_from_record(llm_options_record(o));
  ASSERT_EQ(again.endpoints.size(), 2u);
  EXPECT_EQ(again.endpoints[1].model, "qwen");
  EXPECT_EQ(again.cache_mode, CacheMode::replay);
  EXPECT_EQ(again.cache_dir, "/tmp/llm-cache");
  EXPECT_THROW(llm_options_from_record(nlohmann::json::object()), Error);
}

TEST(ErrorKinds, PermanentOnesAreTheOnesNoRetryFixes) {
  for (auto k : {ChatErrorKind::auth, ChatErrorKind::http_status, ChatErrorKind::config, ChatErrorKind::content_type})
    EXPECT_TRUE(is_permanent(k)) << to_string(k);
  for (auto k : {ChatErrorKind::network, ChatErrorKind::timeout, ChatErrorKind::rate_limited, ChatErrorKind::server,
                 ChatErrorKind::truncated, ChatErrorKind::malformed, ChatErrorKind::budget, ChatErrorKind::cache_miss})
    EXPECT_FALSE(is_permanent(k)) << to_string(k);
}

}  // namespace
}  // namespace tessera::agent
