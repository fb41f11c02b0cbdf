#pragma once
// Noise-aware acceptance: a candidate replaces a parent, an elite or the best
// kernel only when it is faster by more than the measurements' own spread.
// Improvements inside the spread are "borderline": the evaluator re-measures
// them, and the decision uses both measurements.
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.hpp"

namespace tessera::search {

// Never trust a difference smaller than this (relative), however tight the spread.
inline constexpr double kMinNoiseMargin = 0.005;
// After a re-measurement the mean improvement must exceed this fraction of the
// margin: two independent measurements shrink the error of their mean.
inline constexpr double kRemeasuredMarginFactor = 0.5;

enum class Verdict { better, borderline, not_better };
std::string to_string(Verdict v);

struct AcceptanceRule {
  bool noise_aware = true;
  double min_margin = kMinNoiseMargin;
  // Scales the spread part of the margin: kRemeasuredMarginFactor for a
  // result that is the mean of two measurements.
  double margin_scale = 1.0;
};

// Relative improvement of `candidate` over `incumbent` by cold median time
// (incumbent/candidate - 1); 0 when either has no timing.
double improvement(const EvalResult& candidate, const EvalResult& incumbent);

// The margin an improvement must beat: half the sum of the two relative
// spreads ((p90-p10)/median), at least rule.min_margin.
double noise_margin(const EvalResult& candidate, const EvalResult& incumbent, const AcceptanceRule& rule);

// One measurement against the incumbent. Without noise awareness any faster
// median is `better`.
Verdict compare(const EvalResult& candidate, const EvalResult& incumbent, const AcceptanceRule& rule);

// Two measurements of the candidate: better when both are faster than the
// incumbent and their mean improvement beats kRemeasuredMarginFactor * margin.
Verdict compare_remeasured(const EvalResult& first, const EvalResult& second, const EvalResult& incumbent,
                           const AcceptanceRule& rule);

// A result with timing the ranking can use.
bool has_timing(const EvalResult& r);

// The combined result kept after a re-measurement: the second result with its
// cold median replaced by the mean of both medians and its spread by the larger.
EvalResult merge_remeasurement(const EvalResult& first, const EvalResult& second);

}  // namespace tessera::search
