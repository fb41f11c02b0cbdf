#pragma once
// The run report: runs/<id>/report.md with SVG plots in runs/<id>/plots/,
// all computed from config.json and trajectories.jsonl (so a report can be
// regenerated for any run, finished, interrupted or resumed).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/engine.hpp"

namespace tessera::search {

inline constexpr double kNearBestFraction = 0.98;  // "evaluations to reach 98% of the final best"
inline constexpr int kMaxPerTaskCurves = 6;        // more tasks: only the geometric-mean curve
inline constexpr int kMaxHeatmaps = 4;             // archive heatmaps drawn (first tasks)

struct CellView {
  std::string structure, behaviour;
  double speedup = 0;
  long long step = -1;
};

struct TaskView {
  Task task;
  std::string id;
  long long steps = 0, evaluations = 0;
  nlohmann::json best = nullptr;  // the trajectory record of the best kernel
  double best_speedup = 0, best_tflops = 0, best_median_us = 0;
  double cublas_tflops = 0, cublaslt_autotuned_tflops = 0;  // measured in the best kernel's run
  long long evals_to_near_best = -1;  // this task's evaluations until kNearBestFraction of its final best
  std::vector<double> curve_x, curve_y;  // this task's evaluations -> best speedup so far
  std::map<std::string, CellView> cells;  // MAP-Elites archive at the end
};

struct RunView {
  std::filesystem::path dir;
  RunConfigFile config;
  std::vector<nlohmann::json> records;
  std::vector<TaskView> tasks;
  nlohmann::json totals = nlohmann::json::object();  // of the last record
  std::vector<double> geo_x, geo_y;  // all evaluations -> geometric-mean best speedup
  bool compile_only = false;         // no record was timed
};

RunView load_run(const std::filesystem::path& run_dir);  // throws bad_input

// Writes report.md and plots/*.svg; returns the report's path.
std::filesystem::path write_report(const RunView& run);

// The tile proposer's moves (proposer_info.move) as a Markdown section: steps
// per kind, how many were counted exploration, how many gave way to the
// model's next pick (predicted far slower than the incumbent), and what each
// kind found. Empty when no step was the tile proposer's.
std::string tile_moves_section(const std::vector<nlohmann::json>& records);

// The lines the CLI prints at the end of a search.
std::string final_summary(const RunView& run);

}  // namespace tessera::search
