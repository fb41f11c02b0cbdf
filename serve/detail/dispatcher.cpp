#include "serve/detail/dispatcher.hpp"

#include <memory>
#include <thread>

#include <fmt/format.h>

#include "env/judge.hpp"

namespace tessera::serve::detail {

namespace {
double ms_between(Dispatcher::Clock::time_point a, Dispatcher::Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

int compile_thread_count(int requested) {
  return requested > 0 ? requested : std::max(1, int(std::thread::hardware_concurrency()));
}

EvalRecord internal_record(const std::string& why) {
  EvalRecord r;
  r.error_type = "internal";
  r.error_message = why;
  return r;
}
}  // namespace

EvalRecord deadline_record(double waited_ms) {
  EvalRecord r;
  r.error_type = "deadline_exceeded";
  r.error_message = fmt::format("the deadline passed after {:.0f} ms in the queue; not evaluated", waited_ms);
  r.total_ms = waited_ms;
  return r;
}

Dispatcher::Dispatcher(const Backend& backend, int compile_threads)
    : backend_(backend), cpu_(compile_thread_count(compile_threads)) {}

void Dispatcher::run(EvalItem item, Clock::time_point deadline, Done done) {
  const auto admitted = Clock::now();
  cpu_.submit([this, item = std::move(item), admitted, deadline, done = std::move(done)]() mutable {
    try {
      prepare(std::move(item), admitted, deadline, done);
    } catch (const std::exception& e) {
      done(internal_record(std::string("the service failed to prepare the evaluation: ") + e.what()));
    }
  });
}

void Dispatcher::prepare(EvalItem item, Clock::time_point admitted, Clock::time_point deadline, const Done& done) {
  if (Clock::now() >= deadline) return done(deadline_record(ms_between(admitted, Clock::now())));
  env::ParsedAction action = backend_.parse(item.action, item.task, item.config.actions);
  auto& pool = *backend_.slots->pool();
  // Filled in order: here, then when an evaluator takes it, then when judged.
  auto rec = std::make_shared<EvalRecord>();
  if (action.ok) {
    const auto c0 = Clock::now();
    pool.evaluator(0).compile_ahead(action.candidate);
    rec->compile_ahead_ms = ms_between(c0, Clock::now());
  }
  auto begin = [rec, admitted, deadline] {
    const auto start = Clock::now();
    if (start >= deadline) return false;
    rec->queue_ms = std::max(0.0, ms_between(admitted, start) - rec->compile_ahead_ms);
    return true;
  };
  auto judged = [rec, admitted, done](std::optional<env::Verdict> verdict) {
    if (!verdict) return done(deadline_record(ms_between(admitted, Clock::now())));
    rec->verdict = std::move(verdict);
    rec->total_ms = ms_between(admitted, Clock::now());
    done(std::move(*rec));
  };
  env::judge_async({std::move(action), std::move(item.task)}, item.config, pool, std::move(begin), std::move(judged));
}

}  // namespace tessera::serve::detail
