// Prices, totals, budgets, the response cache, limits and configuration.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

#include <gtest/gtest.h>

#include "agent/client.hpp"
#include "agent/ensemble.hpp"
#include "agent/limiter.hpp"
#include "agent/proposer.hpp"
#include "core/error.hpp"
#include "tests/agent/fake_clock.hpp"
#include "tests/agent/test_server.hpp"

namespace tessera::agent {
namespace {

using std::chrono::milliseconds;

std::filesystem::path temp_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("tessera_agent_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

TEST(Prices, ExactPrefixVendorAndUnknownModels) {
  const auto& t = PriceTable::builtin();
  ASSERT_TRUE(t.find("gpt-4o"));
  EXPECT_DOUBLE_EQ(t.find("gpt-4o-mini-2024-07-18")->input_per_mtok, t.find("gpt-4o-mini")->input_per_mtok);  // longest prefix
  EXPECT_DOUBLE_EQ(t.find("openai/gpt-4o")->output_per_mtok, t.find("gpt-4o")->output_per_mtok);
  Usage u{1000000, 2000000, 0, 0, 0};
  EXPECT_TRUE(t.price("gpt-4o", u));
  EXPECT_NEAR(u.cost_usd, t.find("gpt-4o")->input_per_mtok + 2 * t.find("gpt-4o")->output_per_mtok, 1e-9);
  EXPECT_FALSE(t.price("my-local-llama", u));
  EXPECT_EQ(u.cost_usd, 0);
  EXPECT_THROW(PriceTable::from_json({{"models", {{"m", {{"input_per_mtok", "cheap"}}}}}}), Error);
}

TEST(Budget, TokensAndDollarsAreEnforcedAcrossThreads) {
  Budget tokens(1000, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      for (int k = 0; k < 50; ++k) tokens.charge(Usage{3, 2, 0, 0, 0});
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(tokens.tokens_spent(), 1000);
  ASSERT_TRUE(tokens.exhausted());
  EXPECT_NE(tokens.exhausted_reason()->find("1000 of 1000 tokens"), std::string::npos);

  Budget usd(0, 0.5);
  usd.charge(Usage{0, 0, 0, 0.3, 0});
  EXPECT_FALSE(usd.exhausted());
  usd.charge(Usage{0, 0, 0, 0.3, 0});
  EXPECT_TRUE(usd.exhausted());
  EXPECT_FALSE(Budget(0, 0).exhausted());  // zero means unlimited
}

TEST(Budget, ClientRefusesOnceExhaustedAndChargesWhatItSpends) {
  testing::TestServer server([](const testing::TestRequest&, int) { return testing::respond(200, testing::openai_reply("ok", 20, 500)); });
  EndpointConfig c;
  c.base_url = server.base_url();
  c.model = "gpt-4o";
  c.max_tokens = 500;  // worst case 530 tokens: the 30-token bound of "hi" and 500 completion
  ClientOptions o;
  o.budget = std::make_shared<Budget>(1000, 0);
  o.ledger = std::make_shared<Ledger>();
  auto client = make_client(c, o);
  ChatRequest r;
  r.messages = {{"user", "hi"}};
  ASSERT_TRUE(client->chat(r).ok);
  EXPECT_EQ(o.budget->tokens_spent(), 520);  // 520 spent + 530 reserved would pass 1000
  const ChatResult refused = client->chat(r);
  EXPECT_EQ(refused.error_kind, ChatErrorKind::budget);
  EXPECT_EQ(server.requests().size(), 1u);
  const auto total = o.ledger->total();
  EXPECT_EQ(total.calls, 2);
  EXPECT_EQ(total.failed_calls, 1);
  EXPECT_EQ(total.usage.prompt_tokens, 20);
  EXPECT_GT(total.usage.cost_usd, 0);
}

TEST(Cache, ReadWriteRecordsThenReplayServesWithoutTheNetwork) {
  const auto dir = temp_dir("cache");
  EndpointConfig c;
  ChatRequest r;
  r.messages = {{"user", "write a kernel"}};
  r.sample_index = 3;
  {
    testing::TestServer server([](const testing::TestRequest&, int) { return testing::respond(200, testing::openai_reply("recorded")); });
    c.base_url = server.base_url();
    c.model = "m";
    ClientOptions o;
    o.cache = std::make_shared<ResponseCache>(dir, CacheMode::read_write);
    auto client = make_client(c, o);
    ASSERT_TRUE(client->chat(r).ok);
    const ChatResult again = client->chat(r);
    EXPECT_TRUE(again.from_cache);
    EXPECT_EQ(again.content, "recorded");
    EXPECT_EQ(server.requests().size(), 1u);
  }  // the server is gone now
  ClientOptions replay;
  replay.cache = std::make_shared<ResponseCache>(dir, CacheMode::replay);
  auto client = make_client(c, replay);
  const ChatResult hit = client->chat(r);
  ASSERT_TRUE(hit.ok) << hit.error;
  EXPECT_EQ(hit.content, "recorded");
  EXPECT_EQ(hit.usage.cost_usd, 0);

  r.sample_index = 4;  // another sample of the same prompt was never recorded
  const ChatResult miss = client->chat(r);
  EXPECT_FALSE(miss.ok);
  EXPECT_EQ(miss.error_kind, ChatErrorKind::cache_miss);
  EXPECT_NE(miss.error.find("replay cache miss"), std::string::npos);
  EXPECT_NE(miss.error.find(dir.string()), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Cache, KeyDependsOnBodyAndSampleButNotOnStreaming) {
  EndpointConfig c;
  c.base_url = "http://x/v1";
  c.model = "m";
  const nlohmann::json body = {{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "a"}}}}};
  nlohmann::json streamed = body;
  streamed["stream"] = true;
  EXPECT_EQ(ResponseCache::key(c, body, 0), ResponseCache::key(c, streamed, 0));
  EXPECT_NE(ResponseCache::key(c, body, 0), ResponseCache::key(c, body, 1));
  nlohmann::json other = body;
  other["temperature"] = 0.5;
  EXPECT_NE(ResponseCache::key(c, body, 0), ResponseCache::key(c, other, 0));
  EXPECT_THROW(parse_cache_mode("sometimes"), Error);
}

TEST(Retry, BackoffScheduleAndRetryAfterParsing) {
  RetryPolicy p;
  p.initial_backoff = milliseconds(500);
  p.max_backoff = milliseconds(3000);
  p.jitter = 0.2;
  EXPECT_EQ(backoff_delay(p, 1, 0.0), milliseconds(500));
  EXPECT_EQ(backoff_delay(p, 2, 0.0), milliseconds(1000));
  EXPECT_EQ(backoff_delay(p, 3, 0.0), milliseconds(2000));
  EXPECT_EQ(backoff_delay(p, 4, 0.0), milliseconds(3000));  // capped
  EXPECT_EQ(backoff_delay(p, 2, 1.0), milliseconds(800));   // full jitter takes 20% off
  const auto now = std::chrono::system_clock::from_time_t(784111777);  // Sun, 06 Nov 1994 08:49:37 GMT
  EXPECT_EQ(parse_retry_after("7", now), milliseconds(7000));
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now), milliseconds(10000));
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now), milliseconds(0));
  EXPECT_FALSE(parse_retry_after("soon", now));
  EXPECT_FALSE(parse_retry_after("", now));
  EXPECT_TRUE(is_retryable_status(429));
  EXPECT_TRUE(is_retryable_status(502));
  EXPECT_FALSE(is_retryable_status(404));
}

TEST(Limits, RateLimiterSpacesStartsAndConcurrencyLimiterBlocks) {
  testing::FakeClock clock;
  RateLimiter rate(10.0, clock);  // 100 ms apart
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(rate.wait(nullptr));
  EXPECT_EQ(clock.sleeps(), (std::vector<Millis>{milliseconds(100), milliseconds(100)}));

  ConcurrencyLimiter limiter(1);
  ASSERT_TRUE(limiter.acquire(nullptr));
  CancelToken cancel;
  std::thread t([&] {
    std::this_thread::sleep_for(milliseconds(50));
    cancel.cancel();
  });
  EXPECT_FALSE(limiter.acquire(&cancel));  // blocked until cancelled, never forever
  t.join();
  limiter.release();
  EXPECT_EQ(limiter.in_flight(), 0);
}

TEST(Config, ParsesFilesAndEnvironment) {
  const auto dir = temp_dir("config");
  std::ofstream(dir / "e.json") << R"({"endpoints": [
    {"name": "fast", "base_url": "http://127.0.0.1:8000/v1", "model": "qwen", "weight": 3, "temperature": 0.2,
     "retry": {"max_attempts": 2, "initial_backoff_ms": 50}, "extra_body": {"top_k": 20}},
    {"provider": "anthropic", "base_url": "https://api.anthropic.com/v1", "model": "claude-sonnet-4-5", "stream": true}]})";
  const auto configs = load_endpoint_configs(dir / "e.json");
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_EQ(configs[0].label(), "fast");
  EXPECT_EQ(configs[0].weight, 3);
  EXPECT_EQ(configs[0].retry.max_attempts, 2);
  EXPECT_EQ(configs[0].retry.initial_backoff, milliseconds(50));
  EXPECT_EQ(configs[1].api_key_env, "ANTHROPIC_API_KEY");
  EXPECT_TRUE(configs[1].stream);

  std::ofstream(dir / "typo.json") << R"({"base_url": "http://x", "model": "m", "temprature": 0.3})";
  try {
    load_endpoint_configs(dir / "typo.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown key 'temprature'"), std::string::npos);
  }
  EXPECT_THROW(parse_endpoint_config({{"model", "m"}}), Error);
  // Integers must be integers in range: a float is refused with its key, never cast.
  for (const nlohmann::json& bad : {nlohmann::json(3.5), nlohmann::json(1e300), nlohmann::json(-1e300)}) {
    try {
      (void)parse_endpoint_config({{"base_url", "http://h/v1"}, {"model", "m"}, {"max_tokens", bad}});
      FAIL() << "max_tokens " << bad.dump() << " was read";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::bad_input);
      EXPECT_NE(std::string(e.what()).find("max_tokens"), std::string::npos) << e.what();
    }
  }

  ::unsetenv("TESSERA_LLM_BASE_URL");
  EXPECT_FALSE(endpoint_from_env());
  ::setenv("TESSERA_LLM_BASE_URL", "http://127.0.0.1:8080/v1", 1);
  ::setenv("TESSERA_LLM_MODEL", "llama", 1);
  ::setenv("TESSERA_LLM_API_KEY_ENV", "MY_KEY", 1);
  const auto env = endpoint_from_env();
  ASSERT_TRUE(env);
  EXPECT_EQ(env->model, "llama");
  EXPECT_EQ(env->api_key_env, "MY_KEY");
  ::unsetenv("TESSERA_LLM_BASE_URL");
  ::unsetenv("TESSERA_LLM_MODEL");
  ::unsetenv("TESSERA_LLM_API_KEY_ENV");
  std::filesystem::remove_all(dir);
}

TEST(Ensemble, PicksByNameAndSamplesByWeight) {
  EndpointConfig a, b;
  a.base_url = b.base_url = "http://127.0.0.1:1/v1";
  a.model = "small";
  a.weight = 1;
  b.name = "big-arm";
  b.model = "big";
  b.weight = 3;
  auto e = Ensemble::from_configs({a, b}, {});
  EXPECT_EQ(e->pick("big-arm", 0).config().model, "big");
  EXPECT_EQ(e->pick("small", 0).config().model, "small");
  EXPECT_THROW(e->pick("medium", 0), Error);
  int big = 0;
  for (std::uint64_t s = 1; s <= 400; ++s) big += e->sample(s).config().model == "big" ? 1 : 0;
  EXPECT_GT(big, 240);  // expectation 300 of 400
  EXPECT_LT(big, 360);
  EXPECT_EQ(&e->sample(17), &e->sample(17));  // deterministic in the seed
}

// Usage read back from a log: a float token count out of range is bad input
// (the run-log fuzzer found 7.8e59, which a plain cast turns into undefined
// behaviour), and totals saturate instead of overflowing.
TEST(Usage, OutOfRangeTokensAreBadInputAndTotalsSaturate) {
  try {
    (void)nlohmann::json::parse(R"({"prompt_tokens": 7.77778e59})").get<Usage>();
    FAIL() << "an out-of-range token count was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::bad_input);
    EXPECT_NE(std::string(e.what()).find("prompt_tokens"), std::string::npos) << e.what();
  }
  const auto u = nlohmann::json::parse(R"({"prompt_tokens": 12, "completion_tokens": 30})").get<Usage>();
  EXPECT_EQ(total_tokens(u), 42);
  Usage huge;
  huge.prompt_tokens = huge.completion_tokens = std::numeric_limits<long long>::max() - 1;
  EXPECT_EQ(total_tokens(huge), std::numeric_limits<long long>::max());
  // A report's running sum saturates the same way, in either direction.
  EXPECT_EQ(add_tokens(std::numeric_limits<long long>::max(), 5), std::numeric_limits<long long>::max());
  EXPECT_EQ(add_tokens(std::numeric_limits<long long>::min(), -5), std::numeric_limits<long long>::min());
  EXPECT_EQ(add_tokens(40, 2), 42);
}

}  // namespace
}  // namespace tessera::agent
