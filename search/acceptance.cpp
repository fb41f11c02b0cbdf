#include "search/acceptance.hpp"

#include <algorithm>

#include "core/stats.hpp"

namespace tessera::search {

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::better: return "better";
    case Verdict::borderline: return "borderline";
    case Verdict::not_better: return "not_better";
  }
  return "not_better";
}

bool has_timing(const EvalResult& r) { return is_success(r.status) && r.cold.median_us > 0; }

double improvement(const EvalResult& candidate, const EvalResult& incumbent) {
  if (!has_timing(candidate) || !has_timing(incumbent)) return 0;
  return incumbent.cold.median_us / candidate.cold.median_us - 1.0;
}

namespace {
double spread_of(const TimingStats& t) {
  if (t.rel_spread > 0) return t.rel_spread;
  if (t.p90_us > t.p10_us) return stats::relative_spread(t.p10_us, t.p90_us, t.median_us);
  return 0;
}
}  // namespace

double noise_margin(const EvalResult& candidate, const EvalResult& incumbent, const AcceptanceRule& rule) {
  return std::max(rule.min_margin, rule.margin_scale * 0.5 * (spread_of(candidate.cold) + spread_of(incumbent.cold)));
}

Verdict compare(const EvalResult& candidate, const EvalResult& incumbent, const AcceptanceRule& rule) {
  if (!has_timing(candidate)) return Verdict::not_better;
  if (!has_timing(incumbent)) return Verdict::better;
  const double gain = improvement(candidate, incumbent);
  if (!rule.noise_aware) return gain > 0 ? Verdict::better : Verdict::not_better;
  if (gain <= 0) return Verdict::not_better;
  return gain > noise_margin(candidate, incumbent, rule) ? Verdict::better : Verdict::borderline;
}

Verdict compare_remeasured(const EvalResult& first, const EvalResult& second, const EvalResult& incumbent,
                           const AcceptanceRule& rule) {
  if (!has_timing(first) || !has_timing(second)) return Verdict::not_better;
  if (!has_timing(incumbent)) return Verdict::better;
  const double g1 = improvement(first, incumbent), g2 = improvement(second, incumbent);
  if (g1 <= 0 || g2 <= 0) return Verdict::not_better;
  const double margin = std::max(noise_margin(first, incumbent, rule), noise_margin(second, incumbent, rule));
  return 0.5 * (g1 + g2) > kRemeasuredMarginFactor * margin ? Verdict::better : Verdict::not_better;
}

EvalResult merge_remeasurement(const EvalResult& first, const EvalResult& second) {
  if (!has_timing(second)) return first;
  EvalResult out = second;
  const double median = 0.5 * (first.cold.median_us + second.cold.median_us);
  out.cold.median_us = median;
  out.cold.samples = first.cold.samples + second.cold.samples;
  out.cold.rel_spread = std::max(spread_of(first.cold), spread_of(second.cold));
  out.cold.p10_us = std::min(first.cold.p10_us, second.cold.p10_us);
  out.cold.p90_us = std::max(first.cold.p90_us, second.cold.p90_us);
  // Figures derived from the median follow it; the baseline was re-timed in the
  // second run, so average it too.
  out.best_baseline_us = 0.5 * (first.best_baseline_us + second.best_baseline_us);
  if (median > 0) {
    // Each speedup is a ratio taken within one run; average the two ratios.
    out.speedup = 0.5 * (first.speedup + second.speedup);
    out.tflops = out.task.tflops_at(median);
    if (second.tflops > 0) out.peak_fraction = second.peak_fraction * out.tflops / second.tflops;
  }
  return out;
}

}  // namespace tessera::search
