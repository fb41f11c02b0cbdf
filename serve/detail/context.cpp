#include "serve/detail/context.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace tessera::serve::detail {

namespace {
constexpr std::size_t kMaxIdempotencyKeyBytes = 256;
constexpr std::size_t kMaxSessionThreads = 256;  // steps block a thread each while they evaluate

bool valid_key(const std::string& key) {
  if (key.size() > kMaxIdempotencyKeyBytes) return false;
  return std::all_of(key.begin(), key.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

// What the work's end does to its state, exactly once.
struct WorkState {
  std::atomic<bool> done{false};
  std::shared_ptr<Admission::Ticket> ticket;
  std::shared_ptr<Scheduler::Handle> timer;
  Finish deliver;
};
}  // namespace

HttpResponse json_response(int status, const nlohmann::json& body) {
  HttpResponse r;
  r.status = status;
  // Kernel sources and compiler logs may hold invalid UTF-8: replace, never throw.
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

HttpResponse error_response(int status, const std::string& type, const std::string& message) {
  return json_response(status, {{"error", {{"type", type}, {"message", message}}}});
}

void Call::respond(HttpResponse response) {
  if (answered_.exchange(true)) return;
  metrics_.request(endpoint, response.status);
  reply_(std::move(response));
}

Context::Context(ServeOptions o, Backend b)
    : options(std::move(o)),
      backend(std::move(b)),
      admission(std::make_shared<Admission>(options.queue_capacity)),
      idempotency(options.idempotency_ttl_s, options.idempotency_entries),
      sessions(options.session_ttl_s, options.max_sessions),
      dispatcher(backend, options.compile_threads),
      session_runner(int(std::min(options.queue_capacity + 1, kMaxSessionThreads))) {}

HttpResponse Context::overloaded() const {
  auto r = error_response(429, "overloaded",
                          fmt::format("the queue is full ({} evaluations admitted); retry after {} s",
                                      admission->capacity(), options.retry_after_s));
  r.headers.emplace_back("Retry-After", std::to_string(options.retry_after_s));
  return r;
}

namespace {
std::shared_ptr<Scheduler::Handle> arm_deadline(Scheduler& scheduler, const std::shared_ptr<Call>& call) {
  const auto left = std::max(Clock::duration::zero(), call->deadline - Clock::now());
  // Weak: the timer must not keep an answered call (and its body) alive.
  return scheduler.after(left, [weak = std::weak_ptr<Call>(call)] {
    if (auto c = weak.lock())
      c->respond(error_response(504, "deadline_exceeded",
                                "the request's deadline passed before its answer was ready; a retry with the same "
                                "Idempotency-Key gets the answer once it is"));
  });
}
}  // namespace

void Context::run(const std::shared_ptr<Call>& call, std::size_t evaluations, Work work) {
  Finish deliver;
  const std::string key = call->request().header("idempotency-key");
  if (!key.empty()) {
    if (!valid_key(key)) {
      call->respond(error_response(400, "bad_request", "Idempotency-Key must be 1 to 256 visible ASCII characters"));
      return;
    }
    const auto& req = call->request();
    const std::string fingerprint = Hasher().add(req.method).add(req.path()).add(req.body).hex();
    switch (idempotency.begin(key, fingerprint, [call](HttpResponse r) { call->respond(std::move(r)); })) {
      case IdempotencyStore::Begin::replayed: metrics.replayed("replayed"); return;
      case IdempotencyStore::Begin::conflict:
        call->respond(error_response(422, "idempotency_conflict",
                                     "this Idempotency-Key was used for a different request"));
        return;
      case IdempotencyStore::Begin::attached:
        metrics.replayed("attached");
        (void)arm_deadline(scheduler, call);
        return;
      case IdempotencyStore::Begin::first: break;
    }
    deliver = [this, key](HttpResponse r, bool keep) { idempotency.finish(key, r, keep); };
  } else {
    deliver = [call](HttpResponse r, bool) { call->respond(std::move(r)); };
  }

  auto state = std::make_shared<WorkState>();
  state->deliver = std::move(deliver);
  if (evaluations > 0) {
    state->ticket = admission->try_admit(evaluations);
    if (!state->ticket) {
      metrics.refused("overloaded");
      state->deliver(overloaded(), false);
      return;
    }
  }
  {
    std::lock_guard g(flight_mu);
    ++in_flight;
  }
  state->timer = arm_deadline(scheduler, call);
  Finish finish = [this, state](HttpResponse r, bool keep) {
    if (state->done.exchange(true)) return;
    state->timer->cancel();
    state->ticket.reset();
    state->deliver(std::move(r), keep);
    {
      std::lock_guard g(flight_mu);
      --in_flight;
    }
    flight_cv.notify_all();
  };
  finish_on_throw(finish, [&] { work(finish); });
}

void finish_on_throw(const Finish& finish, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    if (e.kind() == Error::Kind::bad_input) finish(error_response(400, "bad_request", e.what()), true);
    else finish(error_response(500, "internal", e.what()), false);
  } catch (const std::exception& e) {
    finish(error_response(500, "internal", e.what()), false);
  }
}

Gauges Context::gauges() const {
  Gauges g;
  const auto& slots = *backend.slots;
  g.running = double(slots.running());
  g.queue_depth = std::max(0.0, double(admission->outstanding()) - g.running);
  g.queue_capacity = double(admission->capacity());
  g.sessions = double(sessions.size());
  g.idempotency_entries = double(idempotency.size());
  g.draining = draining;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    g.busy_fraction.push_back(slots.busy_fraction(i));
    g.busy_seconds.push_back(slots.busy_seconds(i));
  }
  g.replacements = double(slots.replacements());
  return g;
}

std::pair<HttpResponse, bool> record_response(const EvalRecord& rec) {
  if (rec.error_type == "deadline_exceeded") return {error_response(504, rec.error_type, rec.error_message), false};
  if (rec.failed()) return {error_response(500, rec.error_type, rec.error_message), false};
  return {json_response(200, rec.to_json()), true};
}

HttpResponse batch_response(const std::vector<EvalRecord>& records, bool& keep) {
  nlohmann::json results = nlohmann::json::array();
  keep = true;
  for (const auto& r : records) {
    results.push_back(r.to_json());
    keep = keep && !r.failed();
  }
  return json_response(200, {{"results", std::move(results)}});
}

void evaluate_all(Context& ctx, std::vector<EvalItem> items, Clock::time_point deadline,
                  std::function<void(std::vector<EvalRecord>)> done) {
  struct Gather {
    std::mutex mu;
    std::vector<EvalRecord> records;
    std::size_t left = 0;
    std::function<void(std::vector<EvalRecord>)> done;
  };
  auto g = std::make_shared<Gather>();
  g->records.resize(items.size());
  g->left = items.size();
  g->done = std::move(done);
  for (std::size_t i = 0; i < items.size(); ++i) {
    ctx.dispatcher.run(std::move(items[i]), deadline, [&ctx, g, i](EvalRecord rec) {
      ctx.metrics.record(rec);
      bool last = false;
      {
        std::lock_guard l(g->mu);
        g->records[i] = std::move(rec);
        last = --g->left == 0;
      }
      if (last) g->done(std::move(g->records));
    });
  }
}

}  // namespace tessera::serve::detail
