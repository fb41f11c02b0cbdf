#pragma once
// The one place an evaluated result's final status is decided from its
// stages (docs/harness.md, "Records are consistent by construction"). The
// worker calls it on every result it returns; anything that builds or reads
// a record can call it again, and tests plant each stage's failure.
#include <string>

#include "core/result.hpp"

namespace tessera {

// What the evaluation was asked to run (EvalOptions' timing and baselines).
struct StagePlan {
  bool timing = true;
  bool baselines = true;
};

// Why a result that its worker called `ok` cannot be: empty when its stages
// support it. `ok` needs a passed verification and, when timing was asked
// for, a measured cold median (the ranking figure) and a measured cold time
// of every baseline that was timed (the speedup's denominator; one with an
// error, or left `skipped`, could not run here).
struct NotOk {
  std::string reason;    // one line for the record's reason
  std::string evidence;  // the failed stage's figures, for fault_evidence
  bool empty() const { return reason.empty(); }
};
NotOk why_not_ok(const EvalResult& r, const StagePlan& plan);

// Settles r.status from its stages:
//  - an `ok` whose stages do not support it becomes `infra_error`, fault
//    "infrastructure", with the failed stage's figures as evidence: a timing
//    stage fails only for reasons of the machine (every sample throttled or
//    lost, clocks below the floor, no sample within the budget) once the
//    worker has retried it (worker/timing_rules.hpp), and a record must never
//    say `ok` without its ranking figure;
//  - every failed timing stage carries a reason (a missing one is named as
//    such);
//  - a result that is not `ok` carries a reason and no speedup, TFLOP/s or
//    peak fraction.
void settle_status(EvalResult& r, const StagePlan& plan);

// One line of a timing stage's figures: status, samples kept and discarded,
// clock, time spent, reason.
std::string describe_timing(const TimingStats& t);

}  // namespace tessera
