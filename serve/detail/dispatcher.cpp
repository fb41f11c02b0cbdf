#include "serve/detail/dispatcher.hpp"

#include <optional>
#include <thread>

#include <fmt/format.h>

#include "serve/detail/resilient_evaluator.hpp"

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

// The service's slots retry a dying evaluator themselves; a plain evaluator
// (tests) is only guarded.
Attempted evaluate_once(Evaluator& ev, const Candidate& c, const Task& t, const EvalOptions& o) {
  if (auto* slot = dynamic_cast<ResilientEvaluator*>(&ev)) return slot->evaluate_attempted(c, t, o);
  return {evaluate_guarded(ev, c, t, o), 1};
}
}  // namespace

EvalRecord deadline_record(double waited_ms) {
  EvalRecord r;
  r.error_type = "deadline_exceeded";
  r.error_message = fmt::format("the deadline passed after {:.0f} ms in the queue; not evaluated", waited_ms);
  r.total_ms = waited_ms;
  return r;
}

Dispatcher::Dispatcher(const Backend& backend, env::ActionSpace actions, int compile_threads)
    : backend_(backend), actions_(actions), cpu_(compile_thread_count(compile_threads)) {}

void Dispatcher::run(EvalItem item, Clock::time_point deadline, Done done) {
  const auto admitted = Clock::now();
  cpu_.submit([this, item = std::move(item), admitted, deadline, done = std::move(done)] {
    std::optional<EvalRecord> now;
    try {
      now = prepare(item, admitted, deadline, done);
    } catch (const std::exception& e) {
      now = internal_record(std::string("the service failed to prepare the evaluation: ") + e.what());
    }
    if (now) done(std::move(*now));
  });
}

std::optional<EvalRecord> Dispatcher::prepare(const EvalItem& item, Clock::time_point admitted,
                                              Clock::time_point deadline, const Done& done) {
  if (Clock::now() >= deadline) return deadline_record(ms_between(admitted, Clock::now()));
  EvalRecord rec;
  const env::ParsedAction action = backend_.parse(item.action, item.task, actions_);
  if (!action.ok) {
    rec.format_error = action.error;
    RewardInput in;
    in.format_ok = false;
    in.format_error = action.error;
    rec.reward = compute_reward(in, backend_.reward);
    rec.total_ms = ms_between(admitted, Clock::now());
    return rec;
  }
  rec.action_kind = action.kind;
  const auto c0 = Clock::now();
  backend_.slots->pool()->evaluator(0).compile_ahead(action.candidate);
  rec.compile_ahead_ms = ms_between(c0, Clock::now());
  backend_.slots->pool()->submit([this, item, candidate = action.candidate, rec = std::move(rec), admitted, deadline, done](
                            Evaluator& ev, std::size_t) mutable {
    EvalRecord out;
    try {
      out = evaluate(ev, item, candidate, std::move(rec), admitted, deadline);
    } catch (const std::exception& e) {
      out = internal_record(std::string("the service failed during the evaluation: ") + e.what());
    }
    done(std::move(out));
  });
  return std::nullopt;
}

EvalRecord Dispatcher::evaluate(Evaluator& ev, const EvalItem& item, const Candidate& candidate, EvalRecord rec,
                                Clock::time_point admitted, Clock::time_point deadline) {
  const auto start = Clock::now();
  if (start >= deadline) return deadline_record(ms_between(admitted, start));
  rec.queue_ms = std::max(0.0, ms_between(admitted, start) - rec.compile_ahead_ms);
  Attempted a = evaluate_once(ev, candidate, item.task, item.options);
  RewardInput in;
  in.result = &a.result;
  rec.reward = compute_reward(in, backend_.reward);
  rec.result = std::move(a.result);
  rec.attempts = a.attempts;
  rec.total_ms = ms_between(admitted, Clock::now());
  return rec;
}

}  // namespace tessera::serve::detail
