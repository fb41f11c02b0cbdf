#pragma once
// Baselines measured once per task and lent to later evaluations of it that
// skip measuring them: the environment's reuse_baselines and the search's
// (search/engine.hpp). Off by default in both: the honest protocol measures
// the baselines interleaved with every kernel. A lent speedup is the kernel's
// cold time against baselines timed in the same process earlier, not beside it.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"

namespace tessera {

struct BaselineRecord {
  std::vector<BaselineResult> baselines;
  std::string best;
  double best_us = 0;
  std::string device;       // the GPU they were measured on (DeviceSummary::name)
  std::string measured_at;  // the measuring evaluation's started_at
  nlohmann::json to_json() const;  // device and measured_at: what a record shows as the source
};

// The baselines of a result that measured them (ok, with a best baseline).
std::optional<BaselineRecord> baseline_record_of(const EvalResult& r);

// Gives a result evaluated without baselines the lent ones, and its speedup
// against them.
void lend_baselines(EvalResult& r, const BaselineRecord& b);

}  // namespace tessera
