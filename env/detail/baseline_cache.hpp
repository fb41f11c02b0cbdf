#pragma once
// The reuse-baselines option (EnvConfig::reuse_baselines): one measurement
// of the cuBLAS/cuBLASLt baselines per task, lent to later evaluations of the
// same task that skip measuring them (core/lent_baselines.hpp). Off by
// default: the honest protocol measures baselines interleaved with every kernel.
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "core/lent_baselines.hpp"
#include "core/result.hpp"

namespace tessera::env::detail {

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

}  // namespace tessera::env::detail
