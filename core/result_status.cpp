#include "core/result_status.hpp"

#include <fmt/format.h>

namespace tessera {

namespace {

constexpr const char* kMeasured = "measured";
constexpr const char* kFailed = "failed";
constexpr const char* kNoReasonGiven = "the stage failed without giving a reason (a harness defect: please report it)";

bool measured(const TimingStats& t) { return t.status == kMeasured && t.median_us > 0; }

// A stage that failed says why; one that did not is named as such.
void give_reason(TimingStats& t) {
  if (t.status == kFailed && t.reason.empty()) t.reason = kNoReasonGiven;
}

NotOk cold_not_measured(const TimingStats& cold) {
  const std::string why = cold.reason.empty() ? (cold.status == kFailed ? kNoReasonGiven : "it did not run") : cold.reason;
  return {fmt::format("the machine failed the cold timing (the ranking figure was not measured): {}", why),
          "cold timing: " + describe_timing(cold)};
}

}  // namespace

std::string describe_timing(const TimingStats& t) {
  std::string out = fmt::format("{}, {} samples kept, {} discarded as throttled, {} with lost records", t.status,
                                t.samples, t.discarded_throttled, t.discarded_other);
  if (t.samples > 0) out += fmt::format(", median {:.3f} us", t.median_us);
  if (t.sm_clock_ghz > 0) out += fmt::format(", SM clock {:.3f} GHz", t.sm_clock_ghz);
  out += fmt::format(", {:.0f} ms", t.elapsed_ms);
  if (!t.reason.empty()) out += ": " + t.reason;
  return out;
}

NotOk why_not_ok(const EvalResult& r, const StagePlan& plan) {
  if (r.verify.status != "passed")
    return {fmt::format("an ok result without a passed verification (verify.status {})", r.verify.status),
            "verification: " + r.verify.status};
  if (!plan.timing) return {};
  if (!measured(r.cold)) return cold_not_measured(r.cold);
  if (!plan.baselines) return {};
  for (const auto& bl : r.baselines) {
    // Not runnable here (an error, or never timed), or measured.
    if (!bl.error.empty() || bl.cold.status == "skipped" || measured(bl.cold)) continue;
    const std::string why = bl.cold.reason.empty() ? kNoReasonGiven : bl.cold.reason;
    return {fmt::format("the machine failed the cold timing of the baseline {} (the speedup's denominator): {}", bl.name,
                        why),
            fmt::format("baseline {} cold timing: {}; candidate cold timing: {}", bl.name, describe_timing(bl.cold),
                        describe_timing(r.cold))};
  }
  return {};
}

void settle_status(EvalResult& r, const StagePlan& plan) {
  give_reason(r.cold);
  give_reason(r.hot);
  for (auto& bl : r.baselines) give_reason(bl.cold);
  if (r.status == Status::ok) {
    if (const NotOk why = why_not_ok(r, plan); !why.empty()) {
      r.status = Status::infra_error;
      r.reason = why.reason;
      r.fault = "infrastructure";
      r.fault_evidence = why.evidence;
    }
  }
  if (r.status == Status::ok) return;
  if (r.reason.empty()) r.reason = fmt::format("{} (no reason was given: a harness defect)", to_string(r.status));
  r.speedup = 0;
  r.tflops = 0;
  r.peak_fraction = 0;
}

}  // namespace tessera
