#include "env/detail/baseline_cache.hpp"

namespace tessera::env::detail {

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
  auto record = baseline_record_of(r);
  if (!record) return;
  std::lock_guard g(mu_);
  by_task_[r.task.id()] = std::move(*record);
}

}  // namespace tessera::env::detail
