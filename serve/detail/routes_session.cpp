// Sessions, one RL episode each: POST /v1/sessions (reset), POST
// /v1/sessions/{id}/step, GET /v1/sessions/{id}, DELETE /v1/sessions/{id}.
// Resets and steps run on the session runner: Environment::step waits for
// its evaluation, and no HTTP thread may wait.
#include <fmt/format.h>

#include "core/error.hpp"
#include "serve/detail/context.hpp"
#include "serve/detail/request_json.hpp"

namespace tessera::serve::detail {

namespace {
HttpResponse no_session(const std::string& id) {
  return error_response(404, "session_not_found",
                        fmt::format("no session '{}' (never created, deleted, or idle past its time to live)", id));
}

// Runs `fn` on the session runner; an exception becomes 400 (bad input) or 500.
template <typename Fn>
void on_runner(Context& ctx, Finish finish, Fn fn) {
  ctx.session_runner.submit([finish = std::move(finish), fn = std::move(fn)]() mutable {
    finish_on_throw(finish, [&] { fn(finish); });
  });
}

nlohmann::json step_json(const env::StepResult& s) {
  return {{"observation", s.observation},
          {"reward", s.reward ? nlohmann::json(*s.reward) : nlohmann::json(nullptr)},
          {"terminated", s.terminated},
          {"truncated", s.truncated},
          {"info", s.info}};
}

void handle_step(Context& ctx, const std::shared_ptr<Call>& call, const std::string& id) {
  call->endpoint = "session_step";
  const auto body = parse_object(call->request().body);
  only_keys(body, {"action"}, "step");
  std::string action = require_string(body, "action", "step");
  const auto deadline = call->deadline;
  ctx.run(call, 1, [&ctx, id, action = std::move(action), deadline](Finish finish) mutable {
    auto session = ctx.sessions.find(id);
    if (!session) return finish(no_session(id), true);
    if (!session->try_begin_step())
      return finish(error_response(409, "step_in_progress",
                                   "another step of this session is running; send steps one at a time"),
                    false);
    if (session->episode().done()) {
      session->end_step();
      return finish(error_response(409, "episode_done", "the episode has ended; create a new session"), true);
    }
    on_runner(ctx, std::move(finish), [&ctx, session, action = std::move(action), deadline](Finish& done) {
      // The step ends before its answer leaves: a client may send the next
      // step the moment it reads this one.
      struct EndStep {
        Session* s;
        void now() {
          if (s) s->end_step();
          s = nullptr;
        }
        ~EndStep() { now(); }
      } end{session.get()};
      const auto t0 = Clock::now();
      // A step still waiting at its deadline is not taken: the client has its
      // 504, and a turn it never saw must not be spent.
      if (t0 >= deadline) {
        end.now();
        return done(error_response(504, "deadline_exceeded", "the step waited past its deadline; not taken"), false);
      }
      const env::StepResult r = session->episode().step(action);
      ctx.metrics.record_step(r.info, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      auto response = json_response(200, step_json(r));
      end.now();
      (void)ctx.sessions.find(session->id());  // the step counts as use: renew the time to live
      done(std::move(response), true);
    });
  });
}

void handle_get(Context& ctx, const std::shared_ptr<Call>& call, const std::string& id) {
  call->endpoint = "session_get";
  auto session = ctx.sessions.find(id);
  if (!session) return call->respond(no_session(id));
  // Readable while a step runs: the summary is the episode's state between steps.
  if (session->busy())
    return call->respond(error_response(409, "step_in_progress", "a step is running; read the session after it"));
  nlohmann::json j = session->episode().summary();
  j["session_id"] = id;
  j["ttl_s"] = ctx.sessions.ttl_s();
  call->respond(json_response(200, j));
}

void handle_delete(Context& ctx, const std::shared_ptr<Call>& call, const std::string& id) {
  call->endpoint = "session_delete";
  if (!ctx.sessions.erase(id)) return call->respond(no_session(id));
  call->respond(json_response(200, {{"session_id", id}, {"deleted", true}}));
}
}  // namespace

void handle_create_session(Context& ctx, const std::shared_ptr<Call>& call) {
  const auto body = parse_object(call->request().body, /*empty_ok=*/true);
  only_keys(body, {"task", "seed", "options"}, "session");
  std::optional<Task> task;
  if (body.contains("task") && !body["task"].is_null()) task = read_task(body["task"], "session.task");
  else task = ctx.options.default_task;
  const std::uint64_t seed = optional_uint(body, "seed", "session").value_or(0);
  nlohmann::json options = body.value("options", nlohmann::json::object());
  if (!options.is_object()) fail_bad_input("session.options must be an object");
  ctx.run(call, 0, [&ctx, task, seed, options](Finish finish) {
    on_runner(ctx, std::move(finish), [&ctx, task, seed, options](Finish& done) {
      auto episode = ctx.backend.new_episode();
      const env::ResetResult r = episode->reset(task, seed, options);
      auto session = ctx.sessions.add(std::move(episode));
      if (!session) {
        auto full = error_response(429, "too_many_sessions",
                                   fmt::format("{} sessions are live; delete finished ones or wait for them to expire",
                                               ctx.options.max_sessions));
        full.headers.emplace_back("Retry-After", std::to_string(ctx.options.retry_after_s));
        return done(std::move(full), false);
      }
      done(json_response(201, {{"session_id", session->id()},
                               {"observation", r.observation},
                               {"info", r.info},
                               {"ttl_s", ctx.sessions.ttl_s()}}),
           true);
    });
  });
}

void handle_session(Context& ctx, const std::shared_ptr<Call>& call, const std::string& id, const std::string& rest) {
  const std::string& m = call->request().method;
  if (rest == "/step") {
    if (m != "POST") return call->respond(error_response(405, "method_not_allowed", "this path accepts POST"));
    return handle_step(ctx, call, id);
  }
  if (!rest.empty()) return call->respond(error_response(404, "not_found", "no such endpoint"));
  if (m == "GET") return handle_get(ctx, call, id);
  if (m == "DELETE") return handle_delete(ctx, call, id);
  auto r = error_response(405, "method_not_allowed", "this path accepts GET, DELETE");
  r.headers.emplace_back("Allow", "GET, DELETE");
  call->respond(std::move(r));
}

}  // namespace tessera::serve::detail
