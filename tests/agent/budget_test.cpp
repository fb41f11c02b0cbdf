// Hard budgets: every call reserves its worst case before it is sent, so
// calls in flight together never spend past a limit.
#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "agent/client.hpp"
#include "tests/agent/test_server.hpp"

namespace tessera::agent {
namespace {

using testing::TestRequest;
using testing::TestServer;

constexpr double kInputPerMtok = 10.0;   // the test model's prices, USD per million tokens
constexpr double kOutputPerMtok = 30.0;
constexpr int kMaxTokens = 1000;

PriceTable test_prices() {
  PriceTable t;
  t.set("priced-model", Price{kInputPerMtok, kOutputPerMtok});
  return t;
}

EndpointConfig local(const TestServer& server, const std::string& model) {
  EndpointConfig c;
  c.base_url = server.base_url();
  c.model = model;
  c.api_key_env = "";
  return c;
}

ChatRequest asking(const std::string& text) {
  ChatRequest r;
  r.messages = {{"system", "You write CUDA kernels."}, {"user", text}};
  return r;
}

TEST(BudgetReservation, HoldsUntilSettledAndReleasesWhatIsNeverSettled) {
  Budget b(1000, 0);
  std::string why, limit;
  auto first = b.reserve({100, 400, 0}, why, limit);
  auto second = b.reserve({100, 400, 0}, why, limit);
  ASSERT_TRUE(first && second);
  EXPECT_FALSE(b.reserve({1, 100, 0}, why, limit)) << "1000 held, 101 more asked";
  EXPECT_EQ(limit, "tokens");
  EXPECT_NE(why.find("1000 held by calls in flight"), std::string::npos) << why;
  first->settle(120, 0);  // the call used far less than its worst case
  EXPECT_EQ(b.tokens_spent(), 120);
  {
    auto abandoned = b.reserve({100, 200, 0}, why, limit);
    ASSERT_TRUE(abandoned);
  }  // released unchanged: nothing charged
  EXPECT_EQ(b.tokens_spent(), 120);
  BudgetReservation moved = std::move(*second);
  EXPECT_FALSE(second->held());
  moved.settle(500, 0);
  EXPECT_EQ(b.tokens_spent(), 620);
  EXPECT_TRUE(b.reserve({0, 380, 0}, why, limit)) << "620 spent + 380 = the limit exactly";
  EXPECT_FALSE(b.reserve({0, 381, 0}, why, limit));

  Budget usd(0, 0.10);
  EXPECT_FALSE(usd.reserve({10, 10, 0.11}, why, limit));
  EXPECT_EQ(limit, "usd");
  EXPECT_NE(why.find("cost budget"), std::string::npos) << why;
  EXPECT_TRUE(Budget(0, 0).reserve({1000000, 1000000, 1e6}, why, limit)) << "zero means no limit";
}

TEST(BudgetReservation, ConcurrentCallsNeverOverspend) {
  constexpr double kLimit = 1.0;
  constexpr double kWorst = 0.09;
  Budget b(0, kLimit);
  std::atomic<int> settled{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      int refusals = 0;
      for (int k = 0; refusals < 5; ++k) {
        std::string why, limit;
        auto r = b.reserve({100, 100, kWorst}, why, limit);
        if (!r) {
          ++refusals;
          continue;
        }
        // Bills between 40% and 100% of the worst case.
        r->settle(200, kWorst * (0.4 + 0.6 * double((t * 7 + k * 3) % 10) / 9.0));
        ++settled;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_GT(settled.load(), 10);
  EXPECT_LE(b.usd_spent(), kLimit + 1e-12);
  EXPECT_GT(b.usd_spent(), kLimit - kWorst) << "calls stop only when the next worst case no longer fits";
}

TEST(BudgetReservation, ThePromptBoundCoversEveryByte) {
  const std::vector<ChatMessage> m = {{"system", std::string(1000, 's')}, {"user", std::string(2500, 'u')}};
  const long long bound = max_prompt_tokens(m);
  EXPECT_GE(bound, 3500);  // at most one token per byte of text...
  EXPECT_EQ(bound, 3500 + 6 + 4 + 2 * kChatTemplateTokensPerMessage + kChatTemplateTokensPerRequest);  // ...plus the template
  const Price p{kInputPerMtok, kOutputPerMtok};
  const CallCost worst = worst_case_cost(bound, kMaxTokens, p);
  EXPECT_NEAR(worst.usd, (bound * kInputPerMtok + kMaxTokens * kOutputPerMtok) / 1e6, 1e-12);
  EXPECT_EQ(worst_case_cost(bound, kMaxTokens, std::nullopt).usd, 0);
}

// The search's situation: many calls, several in flight, until the budget
// refuses. The spend never passes the limit, refused calls never reach the
// server, and what the budget counts is what the replies billed.
TEST(HardBudget, ACostBudgetIsNeverExceeded) {
  TestServer server(testing::distinct_kernels());
  const PriceTable prices = test_prices();
  EndpointConfig c = local(server, "priced-model");
  c.max_tokens = kMaxTokens;
  const ChatRequest request = asking(std::string(6000, 'p'));
  const CallCost worst = worst_case_cost(max_prompt_tokens(request.messages), kMaxTokens, *prices.find(c.model));
  const double limit = 5.5 * worst.usd;
  ClientOptions o;
  o.prices = &prices;
  o.budget = std::make_shared<Budget>(0, limit);
  o.ledger = std::make_shared<Ledger>();
  auto client = make_client(c, o);
  std::atomic<int> ok{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&] {
      for (int k = 0; k < 30; ++k) {
        const ChatResult r = client->chat(request);
        if (r.ok) ++ok;
        else if (r.error_kind == ChatErrorKind::budget) ++refused;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_GT(ok.load(), 5) << "each call bills well under its worst case, so more than 5.5 worst cases fit";
  EXPECT_GT(refused.load(), 0);
  EXPECT_LE(o.budget->usd_spent(), limit + 1e-12);
  EXPECT_NEAR(o.ledger->total().usage.cost_usd, o.budget->usd_spent(), 1e-12);
  EXPECT_EQ(int(server.requests().size()), ok.load());
  for (const auto& r : server.requests()) EXPECT_EQ(testing::parse_chat(r).body["max_tokens"], kMaxTokens);
}

TEST(HardBudget, ARequestWithoutMaxTokensIsBoundedUnderABudgetOnly) {
  TestServer server([](const TestRequest& r, int) { return testing::billed_reply(r, "hello"); });
  EndpointConfig c = local(server, "local-model");
  ClientOptions budgeted;
  budgeted.budget = std::make_shared<Budget>(100000, 0);
  ASSERT_TRUE(make_client(c, budgeted)->chat(asking("hi")).ok);
  ASSERT_TRUE(make_client(c, {})->chat(asking("hi")).ok);
  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(testing::parse_chat(reqs[0]).body["max_tokens"], kBudgetedMaxTokens);
  EXPECT_FALSE(testing::parse_chat(reqs[1]).body.contains("max_tokens"));
}

TEST(HardBudget, AnUnpricedModelCannotSpendACostBudget) {
  TestServer server([](const TestRequest& r, int) { return testing::billed_reply(r, "hello"); });
  EndpointConfig c = local(server, "my-local-llama");
  ClientOptions o;
  o.budget = std::make_shared<Budget>(0, 1.0);
  const ChatResult r = make_client(c, o)->chat(asking("hi"));
  EXPECT_EQ(r.error_kind, ChatErrorKind::budget);
  EXPECT_EQ(r.budget_limit, "usd");
  EXPECT_NE(r.error.find("'my-local-llama' is not in the price table"), std::string::npos) << r.error;
  EXPECT_TRUE(server.requests().empty());
  ClientOptions tokens_only;
  tokens_only.budget = std::make_shared<Budget>(100000, 0);
  EXPECT_TRUE(make_client(c, tokens_only)->chat(asking("hi")).ok) << "a token budget needs no price";
}

TEST(HardBudget, AReplyWithoutUsageIsChargedItsWorstCase) {
  TestServer server([](const TestRequest&, int) {
    return testing::respond(200, R"({"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]})");
  });
  EndpointConfig c = local(server, "local-model");
  c.max_tokens = 50;
  ClientOptions o;
  o.budget = std::make_shared<Budget>(100000, 0);
  const ChatRequest request = asking("hi");
  ASSERT_TRUE(make_client(c, o)->chat(request).ok);
  EXPECT_EQ(o.budget->tokens_spent(), max_prompt_tokens(request.messages) + 50);
}

}  // namespace
}  // namespace tessera::agent
