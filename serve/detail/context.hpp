#pragma once
// The service's parts and the path every request that does work takes:
// idempotency key, admission into the bounded queue, a deadline, then the
// work, whose one answer goes to the request and to the key's waiters.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "core/thread_pool.hpp"
#include "serve/backend.hpp"
#include "serve/detail/admission.hpp"
#include "serve/detail/dispatcher.hpp"
#include "serve/detail/idempotency.hpp"
#include "serve/detail/scheduler.hpp"
#include "serve/detail/service_metrics.hpp"
#include "serve/detail/sessions.hpp"
#include "serve/http.hpp"
#include "serve/options.hpp"

namespace tessera::serve::detail {

using Clock = std::chrono::steady_clock;

HttpResponse json_response(int status, const nlohmann::json& body);
// {"error": {"type": ..., "message": ...}}
HttpResponse error_response(int status, const std::string& type, const std::string& message);

// One request on its way to its one response.
class Call {
public:
  Call(HttpRequest request, Reply reply, ServiceMetrics& metrics)
      : request_(std::move(request)), reply_(std::move(reply)), metrics_(metrics) {}
  const HttpRequest& request() const { return request_; }
  // The first response wins (the result or the deadline's 504); later ones
  // are dropped.
  void respond(HttpResponse response);
  bool answered() const { return answered_; }

  std::string endpoint = "unknown";  // the metrics label
  Clock::time_point deadline;

private:
  HttpRequest request_;
  Reply reply_;
  ServiceMetrics& metrics_;
  std::atomic<bool> answered_{false};
};

// The end of a piece of work: its response, and whether it is final (kept
// for the idempotency key's replays) or not (the work did not run; a retry
// with the same key runs it).
using Finish = std::function<void(HttpResponse response, bool keep)>;
using Work = std::function<void(Finish finish)>;

// Runs `fn`; an exception it throws finishes the work instead: bad_input as
// a final 400, anything else as 500 (not kept: a retry may succeed).
void finish_on_throw(const Finish& finish, const std::function<void()>& fn);

struct Context {
  Context(ServeOptions o, Backend b);

  // Runs `work` for `call` once per idempotency key, with `evaluations`
  // admitted into the queue (0: nothing to admit) and the call's deadline
  // armed. `work` must call its Finish exactly once.
  void run(const std::shared_ptr<Call>& call, std::size_t evaluations, Work work);
  HttpResponse overloaded() const;
  Gauges gauges() const;

  ServeOptions options;
  Backend backend;
  std::shared_ptr<Admission> admission;
  IdempotencyStore idempotency;
  SessionTable sessions;
  ServiceMetrics metrics;
  std::atomic<bool> draining{false};

  mutable std::mutex flight_mu;
  mutable std::condition_variable flight_cv;
  std::size_t in_flight = 0;  // work started and not finished; guarded by flight_mu

  // Declared last, destroyed first: their threads use everything above.
  Dispatcher dispatcher;
  tessera::ThreadPool session_runner;  // resets and steps (Environment::step blocks)
  Scheduler scheduler;
};

// The routes, one file each (routes_*.cpp).
void handle_evaluate(Context& ctx, const std::shared_ptr<Call>& call);
void handle_batch(Context& ctx, const std::shared_ptr<Call>& call);
void handle_get_reward(Context& ctx, const std::shared_ptr<Call>& call);
void handle_create_session(Context& ctx, const std::shared_ptr<Call>& call);
void handle_session(Context& ctx, const std::shared_ptr<Call>& call, const std::string& id, const std::string& rest);

// The answer for a finished stateless evaluation: 200 with the record, or
// its typed error; `keep` false when nothing was evaluated.
std::pair<HttpResponse, bool> record_response(const EvalRecord& rec);
// The items' records joined as {"results": [...]}.
HttpResponse batch_response(const std::vector<EvalRecord>& records, bool& keep);
// Runs every item through the dispatcher, then `done` with the records in order.
void evaluate_all(Context& ctx, std::vector<EvalItem> items, Clock::time_point deadline,
                  std::function<void(std::vector<EvalRecord>)> done);

}  // namespace tessera::serve::detail
