#pragma once
// The figures of `tessera bench scale` (docs/scaling.md): per point (a path,
// a shape, a number of GPUs) the evaluations per minute, how they scale
// against the path and shape's smallest point, where each evaluation's time
// went stage by stage, and what the GPUs did meanwhile (clocks, power,
// throttle reasons, busy share). Typed structs with a JSON round trip, so a
// file written by `--json` reads back into the same figures.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_struct.hpp"
#include "core/table.hpp"

namespace tessera::bench {

// One stage of an evaluation over a point's evaluations, in wall ms.
struct StageFigures {
  std::string stage;  // queue, compile, round_trip, a worker phase (setup, load, verify, ...), wall, ...
  int n = 0;          // evaluations that went through it
  double p50_ms = 0;  // the upper median
  double mean_ms = 0;
  double p90_ms = 0;
};
TESSERA_JSON_DECLARE(StageFigures);

// The candidates' cold timings over a point (EvalResult.cold): the timer
// stops on noise, not on a count, so a GPU whose clocks wander under load
// takes more samples and longer to converge, and this says whether it did.
struct ColdTimingFigures {
  int timed = 0;                    // evaluations with a measured cold timing
  double samples = 0;               // kept samples, mean
  double discarded_throttled = 0;   // samples dropped in an SM clock dip, mean
  double discarded_other = 0;       // samples with lost activity records, mean
  double converged = 0;             // share that stopped on spread, not on the timeout
  double rel_spread_p50 = 0;        // (p90 - p10) / median, upper median over the evaluations
  double elapsed_ms_p50 = 0;        // the timer's own time for the cold timing
  double sm_clock_ghz = 0;          // the worker's clock probe over kept samples, mean
};
TESSERA_JSON_DECLARE(ColdTimingFigures);

// One GPU during a point's measured evaluations: NVML's readings, every
// period_s, summarised (means unless named otherwise); busy from the path.
struct GpuFigures {
  int device = -1;   // CUDA ordinal
  std::string name;  // NVML's name of it
  int samples = 0;   // NVML readings taken; 0 with `problem` saying why
  double sm_clock_mhz = 0;
  double sm_clock_min_mhz = 0;
  double mem_clock_mhz = 0;
  double power_w = 0;
  double power_max_w = 0;
  double power_limit_w = 0;
  double temperature_c = 0;
  double temperature_max_c = 0;
  double util_gpu_pct = 0;
  double util_mem_pct = 0;
  // Share of the readings that held each throttle reason (gpu_idle,
  // sw_power_cap, hw_slowdown, sw_thermal, hw_thermal, hw_power_brake ...).
  std::map<std::string, double> throttle;
  // Share of the point's wall time the GPU spent in evaluations: the pool
  // path sums its results' wall_ms, the serve path reads the service's
  // tessera_gpu_busy_seconds_total before and after; negative when unknown.
  double busy = -1;
  std::string problem;  // why there are no readings ("NVML unavailable: ...")
};
TESSERA_JSON_DECLARE(GpuFigures);

struct ScalePoint {
  std::string path;   // pool | serve | search
  std::string shape;  // MxNxK
  int gpus = 0;
  std::vector<int> devices;
  int evals = 0;
  double wall_s = 0;  // first submission to last answer
  double evals_per_min = 0;
  // Against the same path and shape's point with the fewest GPUs (1 GPU
  // unless --counts leaves it out): the ratio of evals/min, and that ratio
  // over the ratio of GPUs (1.0 is linear). 0 without such a point.
  double scaling = 0;
  double linear_fraction = 0;
  std::map<std::string, int> statuses;
  int compile_cache_hits = 0;  // evaluations whose compile in the evaluator found the kernel cached
  std::vector<StageFigures> stages;
  ColdTimingFigures cold;
  std::vector<GpuFigures> gpu;
  std::string note;  // what else the reader must know (a server's warning, a failed warm-up)
};
TESSERA_JSON_DECLARE(ScalePoint);

struct ScaleReport {
  std::string started_at;  // ISO-8601 UTC
  std::string mode;        // full | compile_only (compile-only figures measure no GPU work)
  std::string cache;       // cold (a fresh kernel cache per point) | warm (compiled before the figures)
  int per_gpu = 0;         // distinct candidates per GPU of a point
  int clients = 0;         // serve path: concurrent HTTP clients
  bool counters = false;   // CUPTI counters in every evaluation
  std::string source;      // the candidate made distinct per evaluation
  std::string nvml;        // "available", or why not
  std::vector<ScalePoint> points;
};
TESSERA_JSON_DECLARE(ScaleReport);

// Fills every point's scaling and linear_fraction from the points beside it.
void fill_scaling(ScaleReport& report);

// One row per point: path, shape, GPUs, evals, wall, evals/min, scaling,
// % of linear, statuses, cache hits, mean busy, SM clock, power, throttling.
Table points_table(const ScaleReport& report);
// One row per point, one column per stage: p50 ms (mean ms).
Table stages_table(const ScaleReport& report);
// One row per point: its cold timings (samples, convergence, clock probe).
Table cold_table(const ScaleReport& report);
// One row per GPU of each point: the NVML figures and busy share.
Table gpus_table(const ScaleReport& report);

}  // namespace tessera::bench
