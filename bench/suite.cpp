#include "bench/suite.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "bench/progress.hpp"
#include "bench/shape_clock.hpp"
#include "bench/table.hpp"
#include "core/error.hpp"

namespace tessera::bench {

namespace {

bool harness_failed(const ShapeRecord& r) { return r.kernel && r.kernel->result.status == Status::infra_error; }

void rewrite_tables(const RunWriter& writer) {
  const Run run = load_run(writer.dir());
  write_tables(run, resolve_ceiling(run.records));
}

}  // namespace

SuiteOutcome run_suite(RunWriter& writer, const RunConfig& config, ShapeMeasurer& measurer, const SuiteOptions& o,
                       const std::atomic<bool>& stop) {
  SuiteOutcome out;
  out.total = int(config.tasks.size());
  std::vector<const Task*> todo;
  std::map<std::string, int> remaining;
  for (const auto& t : config.tasks) {
    if (writer.finished().count(t.id())) ++out.done_before;
    else {
      todo.push_back(&t);
      ++remaining[bucket_of(t, config.buckets)];
    }
  }
  std::optional<SweepProgress> progress;
  if (o.progress && !todo.empty()) progress.emplace(stderr, out.total, out.done_before, remaining);
  // The next task from `from` on that is this process's: every one, or with
  // a claim function the first it claims (claimed before it is prepared, so a
  // sibling never prepares or measures it too).
  const auto next_task = [&](std::size_t from) {
    for (; from < todo.size(); ++from) {
      if (!o.claim || o.claim(*todo[from])) return from;
      ++out.claimed_elsewhere;  // (children of --gpus run without a progress bar: the parent draws one)
    }
    return from;
  };
  // The recorded shapes' times, to tell whether the next one fits in the
  // minutes left (earlier sessions' too: a continued sweep knows them first).
  ShapeClock clock;
  if (o.max_minutes > 0)
    for (const auto& r : load_run(writer.dir()).records) clock.add(r.task, r.wall_s, r.device);
  // What a shape should still take: the fitted line's time less a part an
  // earlier run kept (a search:N shape's search), which is not measured again.
  const auto seconds_needed = [&](const Task& t) -> std::optional<double> {
    const auto whole = clock.seconds_for(t);
    if (!whole) return std::nullopt;
    return std::max(0.0, *whole - measurer.seconds_kept(t));
  };
  const auto t0 = std::chrono::steady_clock::now();
  int failures_in_a_row = 0;
  // Shapes passed over as they would not fit in the minutes left, the first
  // of them said in full: a later, shorter one may still fit (the shapes come
  // in file order, or longest first under --gpus), and the next run starts with them.
  int not_started = 0;
  std::string first_not_started;
  bool reached_the_limit = false;  // the plain stop, which the not-started message then says in full
  for (std::size_t i = next_task(0), next = 0; i < todo.size(); i = next) {
    if (stop) {
      out.stopped_because = "interrupted";
      break;
    }
    const double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 60.0;
    const bool tried_one = out.measured + out.harness_failures > 0;  // at least one shape per session
    if (o.max_minutes > 0 && tried_one && minutes >= o.max_minutes) {
      out.stopped_because = fmt::format("the time limit (--max-minutes {})", o.max_minutes);
      reached_the_limit = true;
      break;
    }
    const Task& task = *todo[i];
    next = next_task(i + 1);
    if (o.max_minutes > 0 && tried_one) {
      const auto need = seconds_needed(task);
      const double left = (o.max_minutes - minutes) * 60.0;
      if (need && *need > left) {
        if (not_started++ == 0)
          first_not_started = fmt::format("{} would take about {:.1f} minutes (fitted to the {} shapes recorded{}) and "
                                          "{:.1f} were left",
                                          task.shape(), *need / 60.0, clock.shapes(),
                                          clock.beyond(task) ? ", each under half its size: a guess" : "", left / 60.0);
        continue;
      }
    }
    if (next < todo.size()) measurer.prepare_next(*todo[next]);
    std::optional<ShapeRecord> record;
    std::optional<std::string> failure;
    const auto shape_t0 = std::chrono::steady_clock::now();
    try {
      record = measurer.measure(task, bucket_of(task, config.buckets));
      if (harness_failed(*record)) failure = record->kernel->result.reason;
    } catch (const Error& e) {
      if (e.kind() == Error::Kind::bad_input) throw;
      failure = e.what();
    }
    if (o.cut && o.cut()) {  // the time limit fell inside this shape: its figures are partial
      const double ran = std::chrono::duration<double>(std::chrono::steady_clock::now() - shape_t0).count() / 60.0;
      // A part of it the measurer kept (a search:N shape's search) is not lost: the next run goes on from it.
      const double kept = measurer.seconds_kept(task);
      out.stopped_because = fmt::format(
          "the time limit (--max-minutes {}) cut {} short after {:.1f} minutes of it, not recorded{}", o.max_minutes,
          task.shape(), ran,
          kept > 0 ? fmt::format("; {:.1f} minutes of it (its search, or the steps of it measured) are kept, "
                                 "and the next run goes on from them",
                                 kept / 60.0)
          : out.measured == 0 ? "; it alone needs a longer limit"
                              : "");
      break;
    }
    if (failure) {
      ++out.harness_failures;
      std::fprintf(stderr, "\nbench: %s not recorded (a harness failure; a later run retries it): %s\n",
                   task.shape().c_str(), failure->c_str());
      if (++failures_in_a_row >= kMaxHarnessFailuresInARow) {
        out.stopped_because = fmt::format("{} harness failures in a row (last: {})", failures_in_a_row, *failure);
        break;
      }
      continue;
    }
    failures_in_a_row = 0;
    writer.append(*record);
    clock.add(record->task, record->wall_s, record->device);
    ++out.measured;
    if (progress) progress->shape_done(*record);
    if (out.measured % kTablesEveryShapes == 0) rewrite_tables(writer);
  }
  if (not_started > 0) {
    const std::string why = fmt::format(
        "the time limit (--max-minutes {}): {} not started, as {} would not fit in the minutes left (the first: {})",
        o.max_minutes, not_started == 1 ? std::string("1 shape was") : fmt::format("{} shapes were", not_started),
        not_started == 1 ? "it" : "they", first_not_started);
    // Another stop (a cut, a Ctrl-C, harness failures) follows it.
    out.stopped_because = out.stopped_because.empty() || reached_the_limit ? why : why + "; then " + out.stopped_because;
  }
  out.complete = int(writer.finished().size()) + out.claimed_elsewhere >= out.total;
  // How long the shapes left would take, by the same fitted line, so that a
  // user can plan the calls or sessions they need (one process's queue only:
  // a --gpus child shares its queue with the others).
  if (!out.complete && o.max_minutes > 0 && !o.claim && !out.stopped_because.empty()) {
    double left_s = 0;
    int left = 0, beyond = 0;
    bool known = true;
    for (const Task* t : todo) {
      if (writer.finished().count(t->id())) continue;
      const auto need = seconds_needed(*t);
      if (!need) known = false;
      else left_s += *need;
      ++left;
      beyond += clock.beyond(*t);
    }
    if (known && left > 0) {
      out.stopped_because += fmt::format("; the {} left would take about {:.0f} minutes (fitted to the {} shapes recorded)",
                                         left == 1 ? std::string("shape") : fmt::format("{} shapes", left),
                                         left_s / 60.0, clock.shapes());
      // Past the recorded sizes the line is a guess: say so, and how far.
      if (beyond > 0)
        out.stopped_because += fmt::format(
            ", a guess for {}, over {:g}x the largest shape recorded ({})",
            beyond == left ? (left == 1 ? std::string("it") : fmt::format("all {} of them", left))
                           : fmt::format("{} of them", beyond),
            ShapeClock::kBeyond, clock.largest());
    }
  }
  if (out.complete) out.stopped_because.clear();
  else if (out.stopped_because.empty()) out.stopped_because = "shapes left after harness failures";
  if (progress) progress->finish(out.complete ? "done" : "stopped: " + out.stopped_because);
  rewrite_tables(writer);
  return out;
}

}  // namespace tessera::bench
