#include "core/lent_baselines.hpp"

namespace tessera {

nlohmann::json BaselineRecord::to_json() const {
  return {{"device", device}, {"measured_at", measured_at}, {"best_baseline", best}, {"best_baseline_us", best_us}};
}

std::optional<BaselineRecord> baseline_record_of(const EvalResult& r) {
  if (r.status != Status::ok || r.best_baseline_us <= 0 || r.baselines.empty()) return std::nullopt;
  return BaselineRecord{r.baselines, r.best_baseline, r.best_baseline_us, r.device.name, r.started_at};
}

void lend_baselines(EvalResult& r, const BaselineRecord& b) {
  r.baselines = b.baselines;
  r.best_baseline = b.best;
  r.best_baseline_us = b.best_us;
  r.speedup = r.status == Status::ok && r.cold.median_us > 0 ? b.best_us / r.cold.median_us : 0;
}

}  // namespace tessera
