#pragma once
// The timing half of one evaluation in the worker: a verified candidate timed
// against the baselines (cold, interleaved), then hot, host latency and
// counters, every phase under the candidate's guards (integrity.hpp).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "core/wire.hpp"
#include "worker/candidate_runtime.hpp"
#include "worker/task_buffers.hpp"
#include "worker/timing.hpp"

namespace tessera::baselines {
class BaselineSuite;
}

namespace tessera::worker {

struct MeasureContext {
  TaskBuffers& buffers;
  GemmCallable& callable;
  const TesseraGemmParams& params;  // points into buffers
  GuardedBuffer& workspace;
  cudaStream_t stream;
  Timer& timer;
  baselines::BaselineSuite* suite;  // null: no baselines
  std::uint64_t seed;               // the request's seed: where the checks fall
  const EvalOptions& options;       // the request's options (hot, counters, counter_set)
  std::function<void(const std::string&)> heartbeat;
};

// Fills r.cold, r.baselines, r.hot, r.host_latency_us, r.counters and
// r.integrity. A checked call that was wrong, or inputs or canaries changed
// while timed, make r a wrong_answer (returns false). Throws CandidateFault
// when the candidate faults.
bool measure_candidate(MeasureContext& ctx, EvalResult& r);

}  // namespace tessera::worker
