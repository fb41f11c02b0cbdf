#pragma once
// Where each evaluation of a point spent its time, stage by stage, and the
// figures of each stage over the point (docs/scaling.md, "The stages"):
//   queue        waiting in the evaluator pool for a free GPU (phase_ms.queue)
//   compile      the evaluator's compile: a cache hit when compiled ahead
//   round_trip   the sandbox's wall time less compile and the worker's own
//                phases: the IPC, the result's JSON, a worker (re)start
//   setup, load, verify, baselines, timing, counters ...  the worker's phases
//   wall         the sandbox's whole evaluation (wall_ms)
// and for an evaluation through `tessera serve`, from its record:
//   compile_ahead  compiled on the service's CPU pool before a GPU took it
//   serve_queue    waiting for a compile thread and a GPU (latency_ms.queue)
//   total          admission to answer in the service (latency_ms.total)
//   client         the HTTP request as the client saw it
// It also keeps the cold timings, for ColdTimingFigures.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/scale_report.hpp"
#include "core/result.hpp"

namespace tessera::bench::detail {

class StageSamples {
public:
  void add_result(const EvalResult& r);
  // One `/v1/evaluate` answer (an evaluation record, or {"error": ...}) and
  // the client's time for it.
  void add_record(const nlohmann::json& record, double client_ms);
  std::vector<StageFigures> figures() const;
  ColdTimingFigures cold() const;

private:
  std::map<std::string, std::vector<double>> ms_;
  std::vector<TimingStats> cold_;  // the measured cold timings
};

}  // namespace tessera::bench::detail
