#include "bench/detail/stage_samples.hpp"

#include <algorithm>
#include <numeric>

#include "core/stats.hpp"

namespace tessera::bench::detail {

namespace {
constexpr double kP90 = 0.9;
}

void StageSamples::add_result(const EvalResult& r) {
  double inside = 0;  // the phases the sandbox's wall time holds
  for (const auto& [phase, ms] : r.phase_ms) {
    ms_[phase].push_back(ms);
    if (phase != "queue") inside += ms;  // the pool's, before the sandbox started
  }
  ms_["wall"].push_back(r.wall_ms);
  ms_["round_trip"].push_back(std::max(0.0, r.wall_ms - inside));
  if (r.cold.status == "measured") cold_.push_back(r.cold);
}

void StageSamples::add_record(const nlohmann::json& record, double client_ms) {
  ms_["client"].push_back(client_ms);
  if (const auto lat = record.find("latency_ms"); lat != record.end() && lat->is_object()) {
    for (const auto& [key, stage] : {std::pair{"compile_ahead", "compile_ahead"}, {"queue", "serve_queue"},
                                     {"total", "total"}})
      if (lat->contains(key) && (*lat)[key].is_number()) ms_[stage].push_back((*lat)[key].get<double>());
  }
  if (const auto res = record.find("result"); res != record.end() && res->is_object()) {
    EvalResult r;
    try {
      r = res->get<EvalResult>();
    } catch (const std::exception&) {
      return;  // a record the service should never send: its status still counts, its stages cannot
    }
    add_result(r);
  }
}

std::vector<StageFigures> StageSamples::figures() const {
  std::vector<StageFigures> out;
  for (const auto& [stage, values] : ms_) {
    if (values.empty()) continue;
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    StageFigures f;
    f.stage = stage;
    f.n = int(sorted.size());
    f.p50_ms = stats::upper_median(sorted);
    f.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(sorted.size());
    f.p90_ms = stats::quantile(sorted, kP90);
    out.push_back(std::move(f));
  }
  return out;
}

ColdTimingFigures StageSamples::cold() const {
  ColdTimingFigures f;
  f.timed = int(cold_.size());
  if (cold_.empty()) return f;
  std::vector<double> spread, elapsed;
  for (const auto& t : cold_) {
    f.samples += t.samples;
    f.discarded_throttled += t.discarded_throttled;
    f.discarded_other += t.discarded_other;
    f.converged += t.converged ? 1 : 0;
    f.sm_clock_ghz += t.sm_clock_ghz;
    spread.push_back(t.rel_spread);
    elapsed.push_back(t.elapsed_ms);
  }
  const double n = double(cold_.size());
  f.samples /= n;
  f.discarded_throttled /= n;
  f.discarded_other /= n;
  f.converged /= n;
  f.sm_clock_ghz /= n;
  f.rel_spread_p50 = stats::upper_median(spread);
  f.elapsed_ms_p50 = stats::upper_median(elapsed);
  return f;
}

}  // namespace tessera::bench::detail
