#pragma once
// Fakes for the service's tests: an evaluator whose answer the action text
// decides, a parser that takes any text but "not a kernel", and an episode
// that evaluates through the shared pool. Every evaluation is counted per
// source, so a test sees a duplicate evaluation at once.
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "serve/backend.hpp"
#include "serve/http.hpp"
#include "serve/options.hpp"
#include "serve/service.hpp"
#include "serve/evaluator_slots.hpp"

namespace tessera::serve::testing {

// Shared by every fake evaluator of a test.
struct Ledger {
  std::mutex mu;
  std::map<std::string, int> evaluations;  // by source
  std::atomic<int> running{0};
  std::atomic<int> max_running{0};
  std::atomic<int> made{0};  // evaluators the factory made
  // Evaluations whose source contains "block" wait until this opens.
  std::promise<void> gate;
  std::shared_future<void> opened = gate.get_future().share();
  int count(const std::string& source);
  int total();
};

// Source keywords: "compile_error", "rejected", "infra" pick the status;
// "wait:<ms>" sleeps first; "block" waits for the ledger's gate; "throw"
// throws out of evaluate(). Anything else is `ok` with speedup 1.5.
class FakeEvaluator final : public Evaluator {
public:
  explicit FakeEvaluator(std::shared_ptr<Ledger> ledger) : ledger_(std::move(ledger)) {}
  EvalResult evaluate(const Candidate& candidate, const Task& task, const EvalOptions& options) override;
  std::string describe() const override { return "fake"; }
  DeviceSummary device() const override { return {}; }

private:
  std::shared_ptr<Ledger> ledger_;
};

std::shared_ptr<EvaluatorSlots> fake_slots(const std::shared_ptr<Ledger>& ledger, int n = 1);
// "not a kernel" is a format failure; any other text is a device-only kernel.
Backend fake_backend(const std::shared_ptr<Ledger>& ledger, int slots = 1);

// Calls the service and waits for its reply (fails the test after 60 s).
HttpResponse call(Service& service, const std::string& method, const std::string& target,
                  const std::string& body = "", std::map<std::string, std::string> headers = {});
// The same, without waiting: the reply arrives through the future.
std::future<HttpResponse> call_async(Service& service, const std::string& method, const std::string& target,
                                     const std::string& body = "", std::map<std::string, std::string> headers = {});

ServeOptions test_options();
std::string eval_body(const std::string& action, const std::string& task = "256x256x256");

}  // namespace tessera::serve::testing
