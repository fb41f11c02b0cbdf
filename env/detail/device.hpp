#pragma once
// The GPU a pool evaluates on, asked once per pool: the task prompt names it
// and the tile configs are checked against its limits.
#include <memory>

#include "harness/pool.hpp"

namespace tessera::env::detail {

// Starts evaluator 0's worker (on that evaluator's own thread, so never
// alongside one of its evaluations) and keeps what it reports. Compile-only
// pools report the architecture only.
DeviceSummary pool_device(const std::shared_ptr<EvaluatorPool>& pool);

}  // namespace tessera::env::detail
