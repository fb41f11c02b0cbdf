#include "bench/suite.hpp"

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "bench/progress.hpp"
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
  const auto t0 = std::chrono::steady_clock::now();
  int failures_in_a_row = 0;
  for (std::size_t i = 0; i < todo.size(); ++i) {
    if (stop) {
      out.stopped_because = "interrupted";
      break;
    }
    const double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 60.0;
    if (o.max_minutes > 0 && i > 0 && minutes >= o.max_minutes) {  // at least one shape per session
      out.stopped_because = fmt::format("the time limit (--max-minutes {})", o.max_minutes);
      break;
    }
    const Task& task = *todo[i];
    if (i + 1 < todo.size()) measurer.prepare_next(*todo[i + 1]);
    std::optional<ShapeRecord> record;
    std::optional<std::string> failure;
    try {
      record = measurer.measure(task, bucket_of(task, config.buckets));
      if (harness_failed(*record)) failure = record->kernel->result.reason;
    } catch (const Error& e) {
      if (e.kind() == Error::Kind::bad_input) throw;
      failure = e.what();
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
    ++out.measured;
    if (progress) progress->shape_done(*record);
    if (out.measured % kTablesEveryShapes == 0) rewrite_tables(writer);
  }
  out.complete = int(writer.finished().size()) >= out.total;
  if (out.complete) out.stopped_because.clear();
  else if (out.stopped_because.empty()) out.stopped_because = "shapes left after harness failures";
  if (progress) progress->finish(out.complete ? "done" : "stopped: " + out.stopped_because);
  rewrite_tables(writer);
  return out;
}

}  // namespace tessera::bench
