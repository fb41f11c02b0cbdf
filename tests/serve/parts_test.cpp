// The service's parts on their own: token comparison, the idempotency store,
// admission, Prometheus rendering, request options.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "serve/detail/admission.hpp"
#include "serve/detail/auth.hpp"
#include "serve/detail/idempotency.hpp"
#include "serve/detail/metrics.hpp"
#include "serve/detail/request_json.hpp"
#include "serve/evaluator_slots.hpp"

namespace tessera::serve::detail {
namespace {

TEST(Auth, OnlyTheExactBearerTokenPasses) {
  EXPECT_TRUE(same_secret("abc", "abc"));
  EXPECT_FALSE(same_secret("abd", "abc"));
  EXPECT_FALSE(same_secret("ab", "abc"));
  EXPECT_FALSE(same_secret("abcd", "abc"));
  EXPECT_FALSE(same_secret("", "abc"));
  EXPECT_TRUE(authorized("Bearer abc", "abc"));
  EXPECT_TRUE(authorized("bearer abc", "abc")) << "the scheme is case-insensitive";
  EXPECT_FALSE(authorized("Bearer abc ", "abc"));
  EXPECT_FALSE(authorized("Bearerabc", "abc"));
  EXPECT_FALSE(authorized("", "abc"));
  EXPECT_TRUE(authorized("", "")) << "no token configured";
}

TEST(IdempotencyStore, FirstAttachedReplayedAndForgotten) {
  IdempotencyStore store(3600, 100);
  std::vector<int> got;
  auto waiter = [&](int id) { return [&got, id](HttpResponse r) { got.push_back(id * 1000 + r.status); }; };
  EXPECT_EQ(store.begin("k", "fp", waiter(1)), IdempotencyStore::Begin::first);
  EXPECT_EQ(store.begin("k", "fp", waiter(2)), IdempotencyStore::Begin::attached);
  EXPECT_EQ(store.begin("k", "other", waiter(3)), IdempotencyStore::Begin::conflict);
  EXPECT_TRUE(got.empty());
  HttpResponse ok;
  ok.status = 200;
  store.finish("k", ok, /*keep=*/true);
  EXPECT_EQ(got, (std::vector<int>{1200, 2200}));
  EXPECT_EQ(store.begin("k", "fp", waiter(4)), IdempotencyStore::Begin::replayed);
  EXPECT_EQ(got.back(), 4200);
  // Work that never ran is forgotten: the next request with the key runs it.
  EXPECT_EQ(store.begin("j", "fp", waiter(5)), IdempotencyStore::Begin::first);
  HttpResponse busy;
  busy.status = 429;
  store.finish("j", busy, /*keep=*/false);
  EXPECT_EQ(got.back(), 5429);
  EXPECT_EQ(store.begin("j", "fp", waiter(6)), IdempotencyStore::Begin::first);
}

TEST(IdempotencyStore, FinishedKeysExpireAndTheOldestGoWhenFull) {
  IdempotencyStore expiring(0, 100);
  HttpResponse ok;
  EXPECT_EQ(expiring.begin("k", "fp", [](HttpResponse) {}), IdempotencyStore::Begin::first);
  expiring.finish("k", ok, true);
  expiring.sweep();
  EXPECT_EQ(expiring.size(), 0u);
  IdempotencyStore small(3600, 2);
  for (const char* k : {"a", "b", "c"}) {
    EXPECT_EQ(small.begin(k, "fp", [](HttpResponse) {}), IdempotencyStore::Begin::first);
    small.finish(k, ok, true);
  }
  EXPECT_EQ(small.size(), 2u);
  EXPECT_EQ(small.begin("a", "fp", [](HttpResponse) {}), IdempotencyStore::Begin::first) << "a was evicted";
}

TEST(Admission, AdmitsWholeRequestsUpToCapacityAndTicketsGiveBack) {
  auto a = std::make_shared<Admission>(4);
  auto t1 = a->try_admit(3);
  ASSERT_NE(t1, nullptr);
  EXPECT_EQ(a->try_admit(2), nullptr);
  auto t2 = a->try_admit(1);
  ASSERT_NE(t2, nullptr);
  EXPECT_EQ(a->outstanding(), 4u);
  t1.reset();
  EXPECT_EQ(a->outstanding(), 1u);
  EXPECT_NE(a->try_admit(3), nullptr);
}

TEST(Metrics, HistogramsRenderCumulativeBucketsSumAndCount) {
  Histogram h({0.1, 1});
  h.observe(0.05);
  h.observe(0.5);
  h.observe(7);
  std::string out;
  h.render(out, "x_seconds", label("stage", "q\"1"));
  EXPECT_EQ(out,
            "x_seconds_bucket{stage=\"q\\\"1\",le=\"0.1\"} 1\n"
            "x_seconds_bucket{stage=\"q\\\"1\",le=\"1\"} 2\n"
            "x_seconds_bucket{stage=\"q\\\"1\",le=\"+Inf\"} 3\n"
            "x_seconds_sum{stage=\"q\\\"1\"} 7.55\n"
            "x_seconds_count{stage=\"q\\\"1\"} 3\n");
}

TEST(RequestJson, EvaluationOptionsAreCheckedAndNeverWeakenVerification) {
  EvalOptions base;
  base.verify_trials = 4;
  const auto o = read_eval_options(nlohmann::json{{"counters", false}, {"counter_set", "fast"}, {"verify_trials", 8}},
                                   base, "o");
  EXPECT_FALSE(o.counters);
  EXPECT_EQ(o.counter_set, "fast");
  EXPECT_EQ(o.verify_trials, 8);
  EXPECT_THROW(read_eval_options(nlohmann::json{{"verify_trials", 2}}, base, "o"), Error);
  EXPECT_THROW(read_eval_options(nlohmann::json{{"timing", false}}, base, "o"), Error);
  EXPECT_THROW(read_eval_options(nlohmann::json{{"hot", "yes"}}, base, "o"), Error);
  EXPECT_EQ(read_task(nlohmann::json("128x64x32"), "t").n, 64);
  EXPECT_EQ(read_task(nlohmann::json(R"({"op":"hgemm","m":8,"n":16,"k":32})"), "t").k, 32);
  EXPECT_THROW(read_task(nlohmann::json(12), "t"), Error);
}

}  // namespace
}  // namespace tessera::serve::detail

namespace tessera::serve {
namespace {

TEST(GpuList, AllOrOrdinals) {
  EXPECT_EQ(parse_gpu_list("all", 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parse_gpu_list("all", 0), (std::vector<int>{0})) << "no GPU: one compile-only slot";
  EXPECT_EQ(parse_gpu_list("2,0", 4), (std::vector<int>{2, 0}));
  EXPECT_EQ(parse_gpu_list("0,1,2", 0), (std::vector<int>{0, 1, 2})) << "compile-only slots";
  for (const char* bad : {"", "1,", "x", "-1", "1.5", "0,,1"}) EXPECT_THROW(parse_gpu_list(bad, 4), Error) << bad;
  EXPECT_THROW(parse_gpu_list("4", 4), Error);
}

}  // namespace
}  // namespace tessera::serve
