#include "worker/timing_rules.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/stats.hpp"

#include "worker/detail/timer.hpp"

namespace tessera::worker {

namespace {

constexpr int kMinGuardedBatches = 2;  // so a guarded timing ends with at least two checks

double median_of(const std::vector<float>& xs) {
  std::vector<double> sorted(xs.begin(), xs.end());
  std::sort(sorted.begin(), sorted.end());
  return stats::quantile(sorted, 0.5);
}

// Why a callable kept no sample: the counts say which of the machine's failures it was.
std::string why_no_sample(const SampleSet& s, const TimingOptions& o, double elapsed_ms) {
  if (s.throttled > 0 && s.lost == 0)
    return fmt::format("every sample ({}) was discarded as throttled: its SM clock was below {:.0f}% of its batch's "
                       "median clock, in {:.0f} ms",
                       s.throttled, 100 * o.throttle_fraction, elapsed_ms);
  if (s.lost > 0 && s.throttled == 0)
    return fmt::format("the activity records of every sample ({}) were lost, in {:.0f} ms", s.lost, elapsed_ms);
  if (s.lost > 0)
    return fmt::format("no sample kept: {} discarded as throttled, {} with lost activity records, in {:.0f} ms",
                       s.throttled, s.lost, elapsed_ms);
  return fmt::format("no sample was taken within the {:.0f} ms budget ({:.0f} ms spent)", o.hard_timeout_ms,
                     elapsed_ms);
}

}  // namespace

float reference_clock(std::vector<float> clocks_ghz) {
  clocks_ghz.erase(std::remove_if(clocks_ghz.begin(), clocks_ghz.end(), [](float c) { return !(c > 0); }),
                   clocks_ghz.end());
  return static_cast<float>(median_of(clocks_ghz));
}

void sort_batch(const std::vector<int>& call_of, const std::vector<double>& times_us,
                const std::vector<float>& clocks_ghz, double throttle_fraction, std::vector<SampleSet>& sets) {
  const float ref = reference_clock(clocks_ghz);
  for (std::size_t j = 0; j < call_of.size(); ++j) {
    SampleSet& s = sets.at(static_cast<std::size_t>(call_of[j]));
    if (std::isnan(times_us[j])) ++s.lost;
    else if (ref > 0 && !(clocks_ghz[j] >= throttle_fraction * ref)) ++s.throttled;
    else {
      s.kept_us.push_back(times_us[j]);
      s.kept_clock_ghz.push_back(clocks_ghz[j]);
    }
  }
}

bool cold_should_stop(const std::vector<TimingStats>& stats, const std::vector<SampleSet>& sets,
                      const TimingOptions& o, double elapsed_ms, int batches_done, bool guarded, bool violation) {
  if (violation) return true;
  bool all_converged = true, every_one_sampled = true;
  for (std::size_t i = 0; i < stats.size(); ++i) {
    all_converged = all_converged && converged(stats[i], o);
    every_one_sampled = every_one_sampled && !sets[i].kept_us.empty();
  }
  const bool enough_batches = !guarded || batches_done >= kMinGuardedBatches;
  if (all_converged && elapsed_ms >= o.min_time_ms && enough_batches) return true;
  if (!sets.empty() && static_cast<int>(sets.front().kept_us.size()) >= o.max_samples) return true;
  if (elapsed_ms >= o.timeout_ms && every_one_sampled) return true;
  return elapsed_ms >= std::max(o.hard_timeout_ms, o.timeout_ms);
}

TimingStats cold_stats(const SampleSet& s, const std::string& method, const TimingOptions& o, double fastest_clock_ghz,
                       double elapsed_ms) {
  TimingStats t = summarize(s.kept_us, method);
  t.converged = converged(t, o);
  t.discarded_throttled = s.throttled;
  t.discarded_other = s.lost;
  t.elapsed_ms = elapsed_ms;
  t.sm_clock_ghz = median_of(s.kept_clock_ghz);
  if (s.kept_us.empty()) {
    t.status = "failed";
    t.reason = why_no_sample(s, o, elapsed_ms);
  } else if (fastest_clock_ghz > 0 && t.sm_clock_ghz < o.clock_floor_fraction * fastest_clock_ghz) {
    t.status = "failed";
    t.reason = fmt::format("the SM clock ran at {:.3f} GHz, below {:.0f}% of the {:.3f} GHz this GPU ran at earlier: "
                           "it was slowed down (a thermal or power brake, or another process)",
                           t.sm_clock_ghz, 100 * o.clock_floor_fraction, fastest_clock_ghz);
  }
  return t;
}

bool machine_failed(const GuardedTiming& t) {
  if (!t.violation.empty()) return false;
  return std::any_of(t.stats.begin(), t.stats.end(), [](const TimingStats& s) { return s.status == "failed"; });
}

GuardedTiming retry_machine_failures(const std::function<GuardedTiming(int attempt)>& attempt, int attempts) {
  GuardedTiming total;
  std::vector<std::string> history;  // per callable: what each attempt said
  for (int a = 1; a <= std::max(1, attempts); ++a) {
    GuardedTiming t = attempt(a);
    t.guarded_calls += total.guarded_calls;
    t.checked_calls += total.checked_calls;
    history.resize(t.stats.size());
    for (std::size_t i = 0; i < t.stats.size(); ++i)
      if (t.stats[i].status == "failed")
        history[i] += fmt::format("{}attempt {}: {}", history[i].empty() ? "" : "; ", a, t.stats[i].reason);
    total = std::move(t);
    if (!machine_failed(total)) return total;
  }
  for (std::size_t i = 0; i < total.stats.size(); ++i)
    if (total.stats[i].status == "failed")
      total.stats[i].reason = fmt::format("{} attempts failed: {}", std::max(1, attempts), history[i]);
  return total;
}

}  // namespace tessera::worker
