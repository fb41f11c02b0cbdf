// EvaluatorPool: one thread per evaluator, batches in request order, jobs
// bound to one evaluator stay there, a throwing evaluator is an infra_error.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "harness/pool.hpp"

namespace tessera {
namespace {

// Records which evaluator ran which candidate, and how many ran at once.
struct Shared {
  std::atomic<int> running{0};
  std::atomic<int> max_running{0};
  std::atomic<int> compiles{0};
};

class FakeEvaluator final : public Evaluator {
public:
  FakeEvaluator(int id, Shared& shared, bool throws = false) : id_(id), shared_(shared), throws_(throws) {}
  EvalResult evaluate(const Candidate& c, const Task& t, const EvalOptions&) override {
    const int now = ++shared_.running;
    for (int seen = shared_.max_running; now > seen && !shared_.max_running.compare_exchange_weak(seen, now);) {}
    {
      std::lock_guard g(mu_);
      ++active_;
      EXPECT_EQ(active_, 1) << "two evaluations at once on one evaluator";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    {
      std::lock_guard g(mu_);
      --active_;
    }
    --shared_.running;
    if (throws_) throw std::runtime_error("worker pipe broke");
    EvalResult r;
    r.status = Status::ok;
    r.task = t;
    r.candidate_name = c.name;
    r.device.name = "fake" + std::to_string(id_);
    return r;
  }
  void compile_ahead(const Candidate&) override { ++shared_.compiles; }
  std::string describe() const override { return "fake"; }
  DeviceSummary device() const override { return {}; }

private:
  int id_;
  Shared& shared_;
  bool throws_;
  std::mutex mu_;
  int active_ = 0;
};

std::unique_ptr<EvaluatorPool> pool_of(int n, Shared& shared) {
  std::vector<std::unique_ptr<Evaluator>> evs;
  for (int i = 0; i < n; ++i) evs.push_back(std::make_unique<FakeEvaluator>(i, shared));
  return std::make_unique<EvaluatorPool>(std::move(evs));
}

std::vector<EvalRequest> requests(int n) {
  std::vector<EvalRequest> out;
  for (int i = 0; i < n; ++i) {
    EvalRequest r;
    r.candidate.name = "k" + std::to_string(i);
    r.task = task_from_shape("64x64x64");
    out.push_back(r);
  }
  return out;
}

TEST(EvaluatorPool, BatchResultsComeBackInRequestOrderFromEveryEvaluator) {
  Shared shared;
  auto pool = pool_of(3, shared);
  std::size_t last_progress = 0;
  const auto results = pool->evaluate_batch(requests(24), EvalOptions{}, [&](std::size_t done, std::size_t total) {
    EXPECT_EQ(total, 24u);
    last_progress = std::max(last_progress, done);
  });
  ASSERT_EQ(results.size(), 24u);
  std::set<std::string> devices;
  for (int i = 0; i < 24; ++i) {
    EXPECT_EQ(results[i].candidate_name, "k" + std::to_string(i));
    devices.insert(results[i].device.name);
  }
  EXPECT_EQ(devices.size(), 3u) << "the batch must spread over every evaluator";
  EXPECT_GE(shared.max_running.load(), 2) << "evaluators must run side by side";
  EXPECT_EQ(last_progress, 24u);
  EXPECT_EQ(shared.compiles.load(), 24) << "every candidate is compiled ahead once";
}

// A batch returns only once every item's progress call has ended: the
// calls use the caller's state, and the pool's own waits on it. The calls
// come one at a time, counts in order, even from three evaluators.
TEST(EvaluatorPool, ABatchReturnsOnlyAfterItsLastProgressCallEnded) {
  Shared shared;
  auto pool = pool_of(3, shared);
  std::atomic<int> inside{0}, most_inside{0}, ended{0};
  std::vector<std::size_t> counts;  // written inside the calls only
  const auto results = pool->evaluate_batch(requests(6), EvalOptions{}, [&](std::size_t done, std::size_t) {
    const int now = ++inside;
    most_inside = std::max(most_inside.load(), now);
    // The first item's call outlasts the evaluation of all the others.
    if (done == 1) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    counts.push_back(done);
    --inside;
    ++ended;
  });
  EXPECT_EQ(results.size(), 6u);
  EXPECT_EQ(ended.load(), 6) << "evaluate_batch returned while a progress call was still running";
  EXPECT_EQ(most_inside.load(), 1);
  EXPECT_EQ(counts, (std::vector<std::size_t>{1, 2, 3, 4, 5, 6}));
}

TEST(EvaluatorPool, JobsBoundToAnEvaluatorRunThere) {
  Shared shared;
  auto pool = pool_of(2, shared);
  std::mutex mu;
  std::vector<std::size_t> where;
  std::atomic<int> left{6};
  for (int i = 0; i < 6; ++i)
    pool->submit_to(1, [&](Evaluator&, std::size_t index) {
      std::lock_guard g(mu);
      where.push_back(index);
      --left;
    });
  while (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::lock_guard g(mu);
  EXPECT_EQ(where, std::vector<std::size_t>(6, 1));
  EXPECT_THROW(pool->submit_to(2, [](Evaluator&, std::size_t) {}), Error);
}

TEST(EvaluatorPool, AThrowingEvaluatorIsAnInfraErrorNotACrash) {
  Shared shared;
  std::vector<std::unique_ptr<Evaluator>> evs;
  evs.push_back(std::make_unique<FakeEvaluator>(0, shared, /*throws=*/true));
  EvaluatorPool pool(std::move(evs));
  auto reqs = requests(1);
  auto r = pool.evaluate_async(reqs[0], EvalOptions{}).get();
  EXPECT_EQ(r.status, Status::infra_error);
  EXPECT_NE(r.reason.find("worker pipe broke"), std::string::npos);
}

TEST(EvaluatorPool, EmptyPoolIsBadInput) {
  EXPECT_THROW(EvaluatorPool(std::vector<std::unique_ptr<Evaluator>>{}), Error);
}

}  // namespace
}  // namespace tessera
