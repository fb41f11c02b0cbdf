#include "env/detail/baseline_cache.hpp"

namespace tessera::env::detail {

nlohmann::json BaselineRecord::to_json() const {
  return {{"device", device}, {"measured_at", measured_at}, {"best_baseline", best}, {"best_baseline_us", best_us}};
}

BaselineCache& BaselineCache::shared() {
  static BaselineCache cache;
  return cache;
}

std::optional<BaselineRecord> BaselineCache::find(const Task& task) const {
  std::lock_guard g(mu_);
  auto it = by_task_.find(task.id());
  if (it == by_task_.end()) return std::nullopt;
  return it->second;
}

void BaselineCache::remember(const EvalResult& r) {
  if (r.status != Status::ok || r.best_baseline_us <= 0 || r.baselines.empty()) return;
  std::lock_guard g(mu_);
  by_task_[r.task.id()] = {r.baselines, r.best_baseline, r.best_baseline_us, r.device.name, r.started_at};
}

void lend_baselines(EvalResult& r, const BaselineRecord& b) {
  r.baselines = b.baselines;
  r.best_baseline = b.best;
  r.best_baseline_us = b.best_us;
  r.speedup = r.status == Status::ok && r.cold.median_us > 0 ? b.best_us / r.cold.median_us : 0;
}

}  // namespace tessera::env::detail
