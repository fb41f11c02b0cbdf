#pragma once
// The sweep: every task of a run not yet in its results, in file order, one
// record appended (and fsync'd) as soon as its shape is done. Stopping at any
// point loses at most the shape being measured; running again continues. With
// a claim function the tasks are a queue shared with sibling processes: a task
// is measured only once this process claims it (bench/claims.hpp).
#include <atomic>
#include <functional>
#include <string>

#include "bench/measure.hpp"
#include "bench/run.hpp"

namespace tessera::bench {

inline constexpr int kTablesEveryShapes = 20;  // shapes.csv and friends are rewritten this often during a sweep
// A shape whose measurement is a harness failure (infra_error, an exception
// from the in-process baselines) is not recorded, so a later run retries it;
// this many in a row stop the sweep.
inline constexpr int kMaxHarnessFailuresInARow = 3;

struct SuiteOptions {
  // Stop between shapes after this long (0: no limit); with `cut`, a shape in
  // flight at the limit is cut short too.
  double max_minutes = 0;
  // Set: true once the time limit cut short the shape just measured
  // (bench/deadline_evaluator.hpp); that shape is not recorded, and the sweep stops.
  std::function<bool()> cut;
  bool progress = true;    // the progress bar on stderr
  // Set: a task is measured only when this returns true for it (called once
  // per task, just before the task is prepared); a task it refuses is another
  // process's, and counts as done for this one.
  std::function<bool(const Task&)> claim;
};

struct SuiteOutcome {
  int total = 0;
  int done_before = 0;  // finished in earlier sessions
  int measured = 0;     // recorded in this session
  int claimed_elsewhere = 0;  // left to sibling processes (SuiteOptions::claim)
  int harness_failures = 0;
  bool complete = false;
  std::string stopped_because;  // why it stopped before the end ("" when complete)
};

// `stop` is polled between shapes (Ctrl-C sets it).
SuiteOutcome run_suite(RunWriter& writer, const RunConfig& config, ShapeMeasurer& measurer, const SuiteOptions& options,
                       const std::atomic<bool>& stop);

}  // namespace tessera::bench
