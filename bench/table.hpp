#pragma once
// The suite's tables (docs/bench.md, "Columns"). Speedup columns carry
// CUDA-L2's names, so our CSV lines up with their published per-shape tables:
// cuBLAS-tn, cuBLAS-nn, cuBLAS-max, cuBLASLt-heuristic-{tn,nn,max},
// cuBLASLt-auto-tuning-{tn,nn,max}. A speedup is the baseline's cold kernel
// time over the kernel's, both from one worker run; "-max" is over the
// faster of the baselines it names. cuBLASLt runs in the task's layout only,
// so for a TN task its -nn columns are empty and -max equals -tn.
// baseline-max is over the fastest of all four baselines.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/buckets.hpp"
#include "bench/ceiling.hpp"
#include "bench/record.hpp"
#include "bench/run.hpp"

namespace tessera::bench {

inline constexpr const char* kAllBuckets = "all";

// The baselines by their result names, in the order tables list them.
const std::vector<std::string>& baseline_names();
// The speedup columns, in CSV order.
const std::vector<std::string>& speedup_column_names();
// The columns the summaries lead with: one per baseline family, and overall.
const std::vector<std::string>& max_column_names();

struct ShapeRow {
  Task task;
  std::string mnk;     // "M_N_K", CUDA-L2's key
  std::string bucket;
  std::string kernel;  // kernel name; "" for baselines only
  std::string status;  // the kernel's status, "no kernel", or "baselines"
  std::optional<double> kernel_us, kernel_tflops;
  double kernel_spread = 0;
  std::map<std::string, double> baseline_us;  // measured baselines, by harness name
  std::string best_baseline;
  std::optional<double> best_baseline_us;
  std::map<std::string, double> speedup;  // speedup column -> value (kernel timed only)
  nlohmann::json counters;                // the kernel's CUPTI counters, when measured
  nlohmann::json model;                   // tile-tuned: the cost model against the sweep (search::to_json)
  std::string note;
  std::string gpu;  // "ordinal name" when the sweep spread shapes over GPUs, else ""
  double wall_s = 0;  // the shape's time in the sweep (the record's wall_s)
};

std::string mnk_of(const Task& t);
ShapeRow shape_row(const ShapeRecord& r);
std::vector<ShapeRow> shape_rows(const std::vector<ShapeRecord>& records);

struct Stat {
  int n = 0;
  double geomean = 0, mean = 0, min = 0, max = 0;
  int wins = 0, losses = 0;  // speedup above / below 1
};
Stat stat_of(const std::vector<double>& speedups);

struct BucketSummary {
  std::string bucket;
  int shapes = 0;        // tasks of the run in this bucket
  int done = 0;          // measured so far
  int kernel_ok = 0;     // with a verified, timed kernel
  int kernel_failed = 0; // a kernel that did not compile, verify or run
  int kernel_compiled = 0;  // compile-only sweeps: compiled and checked, not run
  std::map<std::string, Stat> speedup;             // by speedup column
  std::map<std::string, int> fastest_baseline;     // how often each baseline was the fastest
  std::map<std::string, double> baseline_tflops;   // geometric mean TFLOP/s per baseline
};

// One summary per bucket (in the run's order) and a last one for all shapes.
std::vector<BucketSummary> summarize(const Run& run, const std::vector<ShapeRow>& rows);

std::string shapes_csv(const std::vector<ShapeRow>& rows, const Ceiling& ceiling);
std::string buckets_csv(const std::vector<BucketSummary>& summaries);
// The per-bucket table in Markdown: for kernel sweeps the kernels' counts and
// speedups (geomean, mean, wins) over the -max columns, for baselines-only
// sweeps each baseline's TFLOP/s and how often it was the fastest.
std::string buckets_markdown(const std::vector<BucketSummary>& summaries);

nlohmann::json summary_json(const Run& run, const std::vector<BucketSummary>& summaries, const Ceiling& ceiling);

// Writes shapes.csv, buckets.csv and summary.json into the run folder.
void write_tables(const Run& run, const Ceiling& ceiling);

}  // namespace tessera::bench
