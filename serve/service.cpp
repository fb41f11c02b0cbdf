#include "serve/service.hpp"

#include <charconv>

#include <fmt/format.h>

#include "core/error.hpp"
#include "serve/detail/auth.hpp"
#include "serve/detail/context.hpp"
#include "serve/detail/request_json.hpp"

namespace tessera::serve {

using detail::Call;
using detail::Clock;
using detail::Context;
using detail::error_response;
using detail::json_response;

namespace {
constexpr auto kSweepPeriod = std::chrono::seconds(5);  // expired sessions and idempotency keys

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// X-Tessera-Deadline: seconds from now, capped by the server's maximum.
Clock::time_point read_deadline(const HttpRequest& req, const ServeOptions& o) {
  const std::string v = req.header("x-tessera-deadline");
  double seconds = o.default_deadline_s;
  if (!v.empty()) {
    double parsed = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
    if (ec != std::errc() || end != v.data() + v.size() || !(parsed > 0))
      fail_bad_input("X-Tessera-Deadline must be a positive number of seconds");
    seconds = std::min(parsed, o.max_deadline_s);
  }
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

HttpResponse method_not_allowed(const std::string& allow) {
  auto r = error_response(405, "method_not_allowed", "this path accepts " + allow);
  r.headers.emplace_back("Allow", allow);
  return r;
}

bool needs_auth(const std::string& path, const ServeOptions& o) {
  if (path == "/healthz" || path == "/metrics") return false;
  if (path == "/get_reward") return !o.open_reward;
  return true;
}

void handle_healthz(Context& ctx, Call& call) {
  const bool draining = ctx.draining;
  call.respond(json_response(draining ? 503 : 200, {{"status", draining ? "draining" : "ok"},
                                                    {"evaluators", ctx.backend.slots->size()},
                                                    {"queue_depth", static_cast<long long>(ctx.gauges().queue_depth)},
                                                    {"queue_capacity", ctx.admission->capacity()},
                                                    {"sessions", ctx.sessions.size()}}));
}

void handle_metrics(Context& ctx, Call& call) {
  HttpResponse r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = ctx.metrics.render(ctx.gauges());
  call.respond(std::move(r));
}

void handle_kill_worker(Context& ctx, Call& call) {
  const auto body = detail::parse_object(call.request().body);
  detail::only_keys(body, {"worker"}, "kill_worker");
  const auto worker = detail::optional_uint(body, "worker", "kill_worker").value_or(0);
  ctx.backend.slots->kill(worker);
  call.respond(json_response(200, {{"worker", worker}, {"killed", true}}));
}

// The route for `path`, or false when there is none.
bool route(Context& ctx, const std::shared_ptr<Call>& call, const std::string& path) {
  const std::string& m = call->request().method;
  auto only = [&](const char* method, const char* endpoint, auto&& fn) {
    call->endpoint = endpoint;
    if (m != method) return call->respond(method_not_allowed(method));
    fn();
  };
  if (path == "/healthz") only("GET", "healthz", [&] { handle_healthz(ctx, *call); });
  else if (path == "/metrics") only("GET", "metrics", [&] { handle_metrics(ctx, *call); });
  else if (path == "/v1/evaluate") only("POST", "evaluate", [&] { detail::handle_evaluate(ctx, call); });
  else if (path == "/v1/evaluate/batch") only("POST", "evaluate_batch", [&] { detail::handle_batch(ctx, call); });
  else if (path == "/get_reward") only("POST", "get_reward", [&] { detail::handle_get_reward(ctx, call); });
  else if (path == "/v1/sessions") only("POST", "session_create", [&] { detail::handle_create_session(ctx, call); });
  else if (path == "/v1/admin/kill_worker" && ctx.options.fault_injection)
    only("POST", "kill_worker", [&] { handle_kill_worker(ctx, *call); });
  else if (starts_with(path, "/v1/sessions/")) {
    const std::string tail = path.substr(std::string("/v1/sessions/").size());
    const auto slash = tail.find('/');
    detail::handle_session(ctx, call, tail.substr(0, slash), slash == std::string::npos ? "" : tail.substr(slash));
  } else {
    return false;
  }
  return true;
}
}  // namespace

Service::Service(ServeOptions options, Backend backend)
    : ctx_(std::make_unique<Context>(std::move(options), std::move(backend))) {
  Context* c = ctx_.get();
  c->scheduler.every(kSweepPeriod, [c] {
    c->sessions.sweep();
    c->idempotency.sweep();
  });
}

Service::~Service() {
  begin_drain();
  (void)wait_drained(std::chrono::hours(24));
}

void Service::handle(HttpRequest request, Reply reply) {
  auto call = std::make_shared<Call>(std::move(request), std::move(reply), ctx_->metrics);
  Context& ctx = *ctx_;
  const std::string path = call->request().path();
  try {
    if (ctx.draining && path != "/healthz" && path != "/metrics") {
      ctx.metrics.refused("draining");
      auto r = error_response(503, "draining", "the service is shutting down; send this request elsewhere");
      r.close = true;
      return call->respond(std::move(r));
    }
    if (needs_auth(path, ctx.options) && !detail::authorized(call->request().header("authorization"), ctx.options.token)) {
      auto r = error_response(401, "unauthorized", "missing or wrong bearer token (Authorization: Bearer <token>)");
      r.headers.emplace_back("WWW-Authenticate", "Bearer");
      return call->respond(std::move(r));
    }
    call->deadline = read_deadline(call->request(), ctx.options);
    if (!route(ctx, call, path)) call->respond(error_response(404, "not_found", "no such endpoint: " + path));
  } catch (const Error& e) {
    call->respond(e.kind() == Error::Kind::bad_input ? error_response(400, "bad_request", e.what())
                                                     : error_response(500, "internal", e.what()));
  } catch (const std::exception& e) {
    call->respond(error_response(500, "internal", e.what()));
  }
}

void Service::begin_drain() { ctx_->draining = true; }
bool Service::draining() const { return ctx_->draining; }

std::size_t Service::in_flight() const {
  std::lock_guard g(ctx_->flight_mu);
  return ctx_->in_flight;
}

bool Service::wait_drained(std::chrono::duration<double> timeout) const {
  std::unique_lock lk(ctx_->flight_mu);
  return ctx_->flight_cv.wait_for(lk, timeout, [&] { return ctx_->in_flight == 0; });
}

std::string Service::metrics_text() const { return ctx_->metrics.render(ctx_->gauges()); }

}  // namespace tessera::serve
