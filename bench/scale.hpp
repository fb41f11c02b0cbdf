#pragma once
// `tessera bench scale` (docs/scaling.md): evaluations per minute over 1, 2,
// ..., N GPUs, through the paths that spread evaluations over GPUs:
//   pool   an EvaluatorPool over k devices, EvaluatorPool::evaluate_batch;
//   serve  `tessera serve --gpus <k devices>` as a child, many HTTP clients
//          posting /v1/evaluate;
//   search `tessera search --gpus <k devices> --proposers tile` as a child.
// Each point evaluates distinct candidates (the source made distinct by a
// define it never reads), after a warm-up that starts every worker and
// autotunes its baselines outside the figures, with a fresh compile cache
// (or, asked, one that holds every kernel already), and records where each
// evaluation's time went and what NVML saw the GPUs do.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bench/scale_report.hpp"
#include "core/task.hpp"
#include "core/wire.hpp"
#include "harness/nvml.hpp"

namespace tessera::bench {

inline constexpr int kDefaultScalePerGpu = 64;    // candidates per GPU of a point: about 30 s of a GPU at 2048^3
inline constexpr int kDefaultScaleClients = 32;   // serve path: concurrent HTTP clients
inline constexpr double kScaleSamplePeriodSeconds = 0.25;  // NVML readings per GPU
inline constexpr double kServeStartTimeoutSeconds = 900;   // workers up, ceilings measured when none is stored

enum class ScalePath { pool, serve, search };
std::string to_string(ScalePath p);
ScalePath parse_scale_path(const std::string& name);  // bad_input naming the paths

struct ScaleOptions {
  std::vector<int> devices;  // CUDA ordinals; a point with k GPUs uses the first k
  std::vector<int> counts;   // GPU counts, ascending, each in [1, devices.size()]
  std::vector<Task> tasks;
  std::vector<ScalePath> paths = {ScalePath::pool, ScalePath::serve};
  int per_gpu = kDefaultScalePerGpu;
  int clients = kDefaultScaleClients;
  bool warm_cache = false;
  EvalOptions eval;          // every evaluation's options, on every path
  SandboxOptions sandbox;    // mode and sandbox settings (device is each point's)
  std::filesystem::path source;  // device-only candidate to vary
  // The tessera binary the serve and search paths start; empty: tessera_executable().
  std::filesystem::path binary;
  double sample_period_s = kScaleSamplePeriodSeconds;
  std::string nvml_library = kNvmlLibrary;  // the driver's (tests name one that does not exist)
  bool progress = true;      // a progress bar on stderr
};

// bad_input for options no run can satisfy: no devices or counts, a count
// of 0 or above the devices given, no tasks or paths, per_gpu or clients below 1.
void validate(const ScaleOptions& o);

// Runs every point (paths x counts x tasks) and returns the figures, scaling
// filled in. Sets TESSERA_CACHE_DIR to a folder of its own for the run (the
// stored ceilings and baseline autotunes copied in), and restores it after.
ScaleReport run_scale(const ScaleOptions& o);

}  // namespace tessera::bench
