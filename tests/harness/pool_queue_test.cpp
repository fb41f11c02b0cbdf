// The evaluator pool's queue stage: every result evaluated on a pool's
// thread says how long it waited for a free evaluator (phase_ms["queue"],
// outside wall_ms), whichever way it was submitted; off a pool's thread
// there is no such stage.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include <fmt/format.h>

#include "harness/pool.hpp"

namespace tessera {
namespace {

constexpr auto kEvaluation = std::chrono::milliseconds(20);

class SlowEvaluator final : public Evaluator {
public:
  EvalResult evaluate(const Candidate& c, const Task& t, const EvalOptions&) override {
    std::this_thread::sleep_for(kEvaluation);
    EvalResult r;
    r.status = Status::ok;
    r.task = t;
    r.candidate_name = c.name;
    r.phase_ms["compile"] = 1;
    return r;
  }
  std::string describe() const override { return "slow"; }
  DeviceSummary device() const override { return {}; }
};

EvaluatorPool one_evaluator() {
  std::vector<std::unique_ptr<Evaluator>> evs;
  evs.push_back(std::make_unique<SlowEvaluator>());
  return EvaluatorPool(std::move(evs));
}

std::vector<EvalRequest> requests(int n) {
  std::vector<EvalRequest> out(n);
  for (int i = 0; i < n; ++i) {
    out[i].candidate.name = fmt::format("k{}", i);
    out[i].task = task_from_shape("64x64x64");
  }
  return out;
}

TEST(PoolQueue, BatchResultsSayHowLongTheyWaitedForAnEvaluator) {
  auto pool = one_evaluator();
  const auto results = pool.evaluate_batch(requests(4), EvalOptions{});
  ASSERT_EQ(results.size(), 4u);
  for (const auto& r : results) {
    ASSERT_TRUE(r.phase_ms.count("queue")) << r.candidate_name;
    EXPECT_GE(r.phase_ms.at("queue"), 0.0);
    EXPECT_EQ(r.phase_ms.at("compile"), 1.0) << "the evaluator's own phases are kept";
  }
  // One evaluator, FIFO: the last waited for the three before it.
  const double three = 3 * std::chrono::duration<double, std::milli>(kEvaluation).count();
  EXPECT_GE(results.back().phase_ms.at("queue"), 0.9 * three);
  EXPECT_LT(results.front().phase_ms.at("queue"), results.back().phase_ms.at("queue"));
}

TEST(PoolQueue, EveryWayOfSubmittingRecordsIt) {
  auto pool = one_evaluator();
  const auto req = requests(1).front();
  EXPECT_TRUE(pool.evaluate_async(req, EvalOptions{}).get().phase_ms.count("queue"));
  std::promise<EvalResult> bound;
  pool.submit_to(0, [&](Evaluator& ev, std::size_t) {
    EvalResult first = evaluate_guarded(ev, req.candidate, req.task, EvalOptions{});
    EvalResult again = evaluate_guarded(ev, req.candidate, req.task, EvalOptions{});
    EXPECT_EQ(again.phase_ms.at("queue"), 0.0) << "a second evaluation in one job did not queue again";
    bound.set_value(first);
  });
  EXPECT_TRUE(bound.get_future().get().phase_ms.count("queue"));
}

TEST(PoolQueue, NoQueueStageOffAPoolsThread) {
  SlowEvaluator ev;
  const auto req = requests(1).front();
  EXPECT_FALSE(evaluate_guarded(ev, req.candidate, req.task, EvalOptions{}).phase_ms.count("queue"));
}

}  // namespace
}  // namespace tessera
