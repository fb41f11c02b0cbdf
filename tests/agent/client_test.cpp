// The HTTP client against a real server on 127.0.0.1: each failure mode gets
// its documented classification, retry count and backoff.
#include <cstdlib>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agent/client.hpp"
#include "tests/agent/fake_clock.hpp"
#include "tests/agent/test_server.hpp"

namespace tessera::agent {
namespace {

using testing::FakeClock;
using testing::TestRequest;
using testing::TestResponse;
using testing::TestServer;
using testing::respond;
using std::chrono::milliseconds;

EndpointConfig config_for(const TestServer& server) {
  EndpointConfig c;
  c.base_url = server.base_url();
  c.model = "test-model";
  c.api_key_env = "TESSERA_TEST_KEY_UNSET";
  c.retry.max_attempts = 3;
  c.retry.initial_backoff = milliseconds(100);
  c.retry.jitter = 0;
  c.connect_timeout_s = 2;
  c.total_timeout_s = 5;
  return c;
}

ChatRequest hello() {
  ChatRequest r;
  r.messages = {{"system", "You write CUDA."}, {"user", "Say hi."}};
  return r;
}

ClientOptions with_clock(FakeClock& clock) {
  ClientOptions o;
  o.clock = &clock;
  o.jitter_seed = 42;
  return o;
}

TEST(Client, SuccessParsesContentUsageAndSendsTheDocumentedBody) {
  TestServer server([](const TestRequest&, int) { return respond(200, testing::openai_reply("hi there", 11, 7, "thinking...")); });
  ::setenv("TESSERA_TEST_KEY_SET", "sk-test-123", 1);
  auto config = config_for(server);
  config.api_key_env = "TESSERA_TEST_KEY_SET";
  config.temperature = 0.7;
  config.seed = 5;
  config.extra_body = {{"top_k", 20}};
  FakeClock clock;
  auto client = make_client(config, with_clock(clock));
  const ChatResult r = client->chat(hello());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.content, "hi there");
  EXPECT_EQ(r.reasoning, "thinking...");
  EXPECT_EQ(r.finish_reason, "stop");
  EXPECT_EQ(r.usage.prompt_tokens, 11);
  EXPECT_EQ(r.usage.completion_tokens, 7);
  EXPECT_EQ(r.usage.reasoning_tokens, 3);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_FALSE(r.priced);  // "test-model" is not in the price table
  EXPECT_EQ(r.usage.cost_usd, 0);
  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].path, "/v1/chat/completions");
  EXPECT_EQ(reqs[0].headers.at("authorization"), "Bearer sk-test-123");
  const auto body = nlohmann::json::parse(reqs[0].body);
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][0]["role"], "system");
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.7);
  EXPECT_EQ(body["seed"], 5);
  EXPECT_EQ(body["top_k"], 20);
  EXPECT_FALSE(body.contains("stream"));
}

TEST(Client, NoKeyVariableMeansNoAuthorizationHeader) {
  TestServer server([](const TestRequest&, int) { return respond(200, testing::openai_reply("ok")); });
  FakeClock clock;
  auto client = make_client(config_for(server), with_clock(clock));
  ASSERT_TRUE(client->chat(hello()).ok);
  EXPECT_EQ(server.requests()[0].headers.count("authorization"), 0u);
}

std::vector<std::string> openai_stream_chunks(bool complete) {
  std::vector<std::string> c = {
      "data: {\"model\":\"test-model\",\"choices\":[{\"delta\":{\"role\":\"assistant\",\"reasoning_content\":\"hmm \"}}]}\n\n",
      "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n",
      ": keep-alive comment\n\n",
      "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\n"};
  if (complete) {
    c.push_back("data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n");
    c.push_back("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\n");
    c.push_back("data: [DONE]\n\n");
  }
  return c;
}

TEST(Client, StreamingAssemblesDeltasReasoningAndUsage) {
  TestServer server([](const TestRequest&, int) {
    TestResponse r;
    r.headers = {{"Content-Type", "text/event-stream; charset=utf-8"}};
    r.chunks = openai_stream_chunks(true);
    r.chunk_delay = milliseconds(5);
    return r;
  });
  auto config = config_for(server);
  config.stream = true;
  FakeClock clock;
  const ChatResult r = make_client(config, with_clock(clock))->chat(hello());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.content, "Hello");
  EXPECT_EQ(r.reasoning, "hmm ");
  EXPECT_EQ(r.finish_reason, "stop");
  EXPECT_EQ(r.usage.prompt_tokens, 5);
  EXPECT_EQ(r.usage.completion_tokens, 2);
  const auto body = nlohmann::json::parse(server.requests()[0].body);
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["stream_options"]["include_usage"], true);
}

TEST(Client, TruncatedStreamIsRetriedThenReported) {
  TestServer server([](const TestRequest&, int) {
    TestResponse r;
    r.headers = {{"Content-Type", "text/event-stream"}};
    r.chunks = openai_stream_chunks(false);
    return r;
  });
  auto config = config_for(server);
  config.stream = true;
  config.retry.max_attempts = 2;
  FakeClock clock;
  const ChatResult r = make_client(config, with_clock(clock))->chat(hello());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error_kind, ChatErrorKind::truncated) << r.error;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST(Client, TruncatedJsonBodyIsTruncatedNotMalformed) {
  TestServer server([](const TestRequest&, int) {
    const std::string full = testing::openai_reply("abc");
    return respond(200, full.substr(0, full.size() / 2)).declare_length(long(full.size()));
  });
  auto config = config_for(server);
  config.retry.max_attempts = 1;
  FakeClock clock;
  const ChatResult r = make_client(config, with_clock(clock))->chat(hello());
  EXPECT_EQ(r.error_kind, ChatErrorKind::truncated) << r.error;
}

TEST(Client, RateLimitedHonoursRetryAfterSeconds) {
  TestServer server([](const TestRequest&, int i) {
    if (i == 0) return respond(429, R"({"error":{"message":"slow down"}})", {{"Content-Type", "application/json"}, {"Retry-After", "2"}});
    return respond(200, testing::openai_reply("ok"));
  });
  FakeClock clock;
  const ChatResult r = make_client(config_for(server), with_clock(clock))->chat(hello());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(clock.sleeps(), std::vector<Millis>{Millis(2000)});
}

TEST(Client, RetryAfterBeyondTheCapIsNotWaitedFor) {
  TestServer server([](const TestRequest&, int) {
    return respond(429, "{}", {{"Retry-After", "3600"}});
  });
  FakeClock clock;
  const ChatResult r = make_client(config_for(server), with_clock(clock))->chat(hello());
  EXPECT_EQ(r.error_kind, ChatErrorKind::rate_limited);
  EXPECT_NE(r.error.find("more than max_retry_after"), std::string::npos) << r.error;
  EXPECT_TRUE(clock.sleeps().empty());
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(Client, RateLimitedRealTimeWaitsAtLeastRetryAfter) {
  TestServer server([](const TestRequest&, int i) {
    if (i == 0) return respond(429, "{}", {{"Retry-After", "1"}});
    return respond(200, testing::openai_reply("ok"));
  });
  const ChatResult r = make_client(config_for(server))->chat(hello());  // the real clock
  ASSERT_TRUE(r.ok) << r.error;
  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_GE(reqs[1].received - reqs[0].received, milliseconds(1000));
}

TEST(Client, ServerErrorThenSuccessBacksOff) {
  TestServer server([](const TestRequest&, int i) {
    if (i == 0) return respond(500, R"({"error":{"message":"boom"}})");
    return respond(200, testing::openai_reply("ok"));
  });
  FakeClock clock;
  const ChatResult r = make_client(config_for(server), with_clock(clock))->chat(hello());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(clock.sleeps(), std::vector<Millis>{Millis(100)});
}

TEST(Client, PersistentServerErrorBacksOffExponentiallyWithinJitterAndGivesUp) {
  TestServer server([](const TestRequest&, int) { return respond(503, "overloaded"); });
  auto config = config_for(server);
  config.retry.max_attempts = 4;
  config.retry.jitter = 0.5;
  FakeClock clock;
  const ChatResult r = make_client(config, with_clock(clock))->chat(hello());
  EXPECT_EQ(r.error_kind, ChatErrorKind::server);
  EXPECT_EQ(r.http_status, 503);
  EXPECT_NE(r.error.find("gave up after 4 attempts"), std::string::npos) << r.error;
  const auto sleeps = clock.sleeps();
  ASSERT_EQ(sleeps.size(), 3u);
  for (size_t i = 0; i < sleeps.size(); ++i) {
    const long long full = 100LL << i;
    EXPECT_LE(sleeps[i].count(), full);
    EXPECT_GE(sleeps[i].count(), full / 2);
  }
}

TEST(Client, TimeoutIsRetriedAndReported) {
  TestServer server([](const TestRequest&, int) {
    return respond(200, testing::openai_reply("late")).after(milliseconds(3000));
  });
  auto config = config_for(server);
  config.total_timeout_s = 0.3;
  config.retry.max_attempts = 2;
  FakeClock clock;
  const auto t0 = std::chrono::steady_clock::now();
  const ChatResult r = make_client(config, with_clock(clock))->chat(hello());
  EXPECT_EQ(r.error_kind, ChatErrorKind::timeout) << r.error;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(2900));  // did not wait for the server
}

TEST(Client, MalformedJsonIsNotRetried) {
  TestServer server([](const TestRequest&, int) { return respond(200, "{\"choices\": [ oops"); });
  FakeClock clock;
  const ChatResult r = make_client(config_for(server), with_clock(clock))->chat(hello());
  EXPECT_EQ(r.error_kind, ChatErrorKind::malformed) << r.error;
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(Client, MissingChoicesIsMalformed) {
  TestServer server([](const TestRequest&, int) { return respond(200, R"({"id":"x"})"); });
  FakeClock clock;
  const ChatResult r = make_client(config_for(server), with_clock(clock))->chat(hello());
  EXPECT_EQ(r.error_kind, ChatErrorKind::malformed) << r.error;
}

TEST(Client, HugeResponseHitsTheSizeLimit) {
  TestServer server([](const TestRequest&, int) { return respond(200, testing::openai_reply(std::string(2 << 20, 'x'))); });
  auto config = config_for(server);
  config.max_response_bytes = 64 << 10;
  FakeClock clock;
  const ChatResult r = make_client(config, with_clock(clock))->chat(hello());
  EXPECT_EQ(r.error_kind, ChatErrorKind::too_large);
  EXPECT_NE(r.error.find("65536 bytes"), std::string::npos) << r.error;
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(Client, WrongContentTypeIsReported) {
  TestServer server([](const TestRequest&, int) {
    return respond(200, "<html>login</html>", {{"Content-Type", "text/html"}});
  });
  FakeClock clock;
  const ChatResult r = make_client(config_for(server), with_clock(clock))->chat(hello());
  EXPECT_EQ(r.error_kind, ChatErrorKind::content_type);
  EXPECT_NE(r.error.find("text/html"), std::string::npos) << r.error;
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(Client, AuthenticationFailureIsNotRetried) {
  TestServer server([](const TestRequest&, int) {
    return respond(401, R"({"error":{"message":"Incorrect API key provided"}})");
  });
  FakeClock clock;
  const ChatResult r = make_client(config_for(server), with_clock(clock))->chat(hello());
  EXPECT_EQ(r.error_kind, ChatErrorKind::auth);
  EXPECT_EQ(r.http_status, 401);
  EXPECT_NE(r.error.find("Incorrect API key provided"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("TESSERA_TEST_KEY_UNSET"), std::string::npos) << r.error;
  EXPECT_EQ(server.requests().size(), 1u);
  EXPECT_TRUE(clock.sleeps().empty());
}

TEST(Client, BadRequestIsNotRetried) {
  TestServer server([](const TestRequest&, int) { return respond(400, R"({"error":"bad model"})"); });
  FakeClock clock;
  const ChatResult r = make_client(config_for(server), with_clock(clock))->chat(hello());
  EXPECT_EQ(r.error_kind, ChatErrorKind::http_status);
  EXPECT_NE(r.error.find("bad model"), std::string::npos);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(Client, ConnectionRefusedIsANetworkErrorAfterRetries) {
  int port;
  { TestServer gone([](const TestRequest&, int) { return TestResponse{}; }); port = gone.port(); }
  EndpointConfig c;
  c.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  c.model = "m";
  c.retry.max_attempts = 2;
  c.retry.jitter = 0;
  c.retry.initial_backoff = milliseconds(10);
  FakeClock clock;
  const ChatResult r = make_client(c, with_clock(clock))->chat(hello());
  EXPECT_EQ(r.error_kind, ChatErrorKind::network) << r.error;
  EXPECT_EQ(r.attempts, 2);
}

TEST(Client, CancellationStopsAnInFlightRequest) {
  TestServer server([](const TestRequest&, int) {
    return respond(200, testing::openai_reply("late")).after(milliseconds(4000));
  });
  CancelToken cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(200));
    cancel.cancel();
  });
  const auto t0 = std::chrono::steady_clock::now();
  const ChatResult r = make_client(config_for(server))->chat(hello(), &cancel);
  canceller.join();
  EXPECT_EQ(r.error_kind, ChatErrorKind::cancelled) << r.error;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(3900));
}

TEST(Client, ConcurrencyLimitIsRespected) {
  TestServer server([](const TestRequest&, int) {
    return respond(200, testing::openai_reply("ok")).after(milliseconds(150));
  });
  auto config = config_for(server);
  config.max_concurrency = 1;
  auto client = make_client(config);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 3; ++i) threads.emplace_back([&] { ok += client->chat(hello()).ok ? 1 : 0; });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 3);
  EXPECT_EQ(server.max_concurrent(), 1);
}

TEST(Client, AnthropicMessagesNonStreamingAndStreaming) {
  TestServer server([](const TestRequest& req, int) {
    const auto body = nlohmann::json::parse(req.body);
    if (body.value("stream", false)) {
      TestResponse r;
      r.headers = {{"Content-Type", "text/event-stream"}};
      r.chunks = {
          "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-x\",\"usage\":{\"input_tokens\":9}}}\n\n",
          "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"plan\"}}\n\n",
          "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n",
          "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":4}}\n\n",
          "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"};
      return r;
    }
    return respond(200, R"({"model":"claude-sonnet-4-x","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"Hello"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":3}})");
  });
  auto config = config_for(server);
  config.provider = Provider::anthropic;
  config.model = "claude-sonnet-4-x";
  ::setenv("TESSERA_TEST_ANTHROPIC_KEY", "ak-1", 1);
  config.api_key_env = "TESSERA_TEST_ANTHROPIC_KEY";
  FakeClock clock;
  ChatResult r = make_client(config, with_clock(clock))->chat(hello());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.content, "Hello");
  EXPECT_EQ(r.reasoning, "t");
  EXPECT_EQ(r.usage.prompt_tokens, 10);
  EXPECT_TRUE(r.priced);  // claude-sonnet-4 prefix
  EXPECT_NEAR(r.usage.cost_usd, (10 * 3.0 + 3 * 15.0) / 1e6, 1e-12);
  const auto req = server.requests()[0];
  EXPECT_EQ(req.path, "/v1/messages");
  EXPECT_EQ(req.headers.at("x-api-key"), "ak-1");
  const auto body = nlohmann::json::parse(req.body);
  EXPECT_EQ(body["system"], "You write CUDA.");
  EXPECT_EQ(body["messages"].size(), 1u);
  EXPECT_TRUE(body.contains("max_tokens"));

  config.stream = true;
  r = make_client(config, with_clock(clock))->chat(hello());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.content, "Hi");
  EXPECT_EQ(r.reasoning, "plan");
  EXPECT_EQ(r.usage.completion_tokens, 4);
  EXPECT_EQ(r.finish_reason, "end_turn");
}

}  // namespace
}  // namespace tessera::agent
