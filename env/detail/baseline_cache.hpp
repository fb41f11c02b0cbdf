#pragma once
// The reuse-baselines option (EnvConfig::reuse_baselines): one measurement
// of the cuBLAS/cuBLASLt baselines per task, lent to later evaluations of the
// same task that skip measuring them. Off by default: the honest protocol
// measures baselines interleaved with every kernel.
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"

namespace tessera::env::detail {

struct BaselineRecord {
  std::vector<BaselineResult> baselines;
  std::string best;
  double best_us = 0;
  std::string device;       // the GPU they were measured on (DeviceSummary::name)
  std::string measured_at;  // the measuring evaluation's started_at
  nlohmann::json to_json() const;  // device and measured_at: what info shows as the source
};

class BaselineCache {
public:
  // One per process: every environment and scorer of a process shares it.
  static BaselineCache& shared();

  std::optional<BaselineRecord> find(const Task& task) const;
  // Keeps the baselines of a result that measured them (ok, with a best baseline).
  void remember(const EvalResult& r);

private:
  mutable std::mutex mu_;
  std::map<std::string, BaselineRecord> by_task_;  // Task::id()
};

// Gives a result evaluated without baselines the remembered ones, and its
// speedup against them.
void lend_baselines(EvalResult& r, const BaselineRecord& b);

}  // namespace tessera::env::detail
