#pragma once
// What every path of `tessera bench scale` shares while it runs its points:
// the options, the run's own compile cache, one progress display, and the
// distinct candidates each point evaluates.
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bench/scale.hpp"
#include "core/candidate.hpp"
#include "core/progress.hpp"

namespace tessera::bench::detail {

// The run's compile cache: TESSERA_CACHE_DIR points at a folder of the run's
// own while it lives (children inherit it), holding copies of the stored
// device ceilings and baseline autotunes, so warming up measures neither
// again and the user's kernel cache is never emptied. Restored and removed
// on destruction.
class ScaleCache {
public:
  ScaleCache();
  ~ScaleCache();
  ScaleCache(const ScaleCache&) = delete;
  ScaleCache& operator=(const ScaleCache&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  // Every compiled kernel gone, so the next compile of each is real. The
  // compile servers' working folder stays: a cold cache has nothing compiled,
  // but a running service keeps its compile processes (a server whose folder
  // goes is replaced, and starting servers is not what a cold cache measures).
  void clear_kernels() const;

private:
  std::filesystem::path dir_;
  std::optional<std::string> previous_;  // TESSERA_CACHE_DIR before the run
};

// One progress bar over the run's evaluations, shared by the threads that
// finish them (the serve path's clients).
class ScaleProgress {
public:
  ScaleProgress(bool enabled, long long total);
  void advance(const std::string& what);
  void message(const std::string& line);
  void finish();

private:
  std::mutex mu_;
  std::unique_ptr<ProgressBar> bar_;  // null: no display
  long long total_, done_ = 0;
};

struct ScaleRun {
  const ScaleOptions& options;
  const ScaleCache& cache;
  ScaleProgress& progress;
  Candidate base;    // the source every candidate varies
  bool compile_only = false;
  std::string nvml;  // what the first sampler said: "available" or why not
};

// `n` candidates, each the base source behind "#define TESSERA_BENCH_VARIANT
// <tag>_<i>": distinct content (so distinct compiles), the same kernel.
std::vector<Candidate> scale_candidates(const Candidate& base, const std::string& tag, int n);

// A point of `path` for `task` on `devices`, its figures still to measure.
ScalePoint new_point(const std::string& path, const Task& task, const std::vector<int>& devices);

// The options' first `gpus` devices.
std::vector<int> devices_of(const ScaleOptions& o, int gpus);

// One point per task, for each path, over the first `gpus` devices.
std::vector<ScalePoint> run_pool_points(ScaleRun& run, int gpus);
std::vector<ScalePoint> run_serve_points(ScaleRun& run, int gpus);
std::vector<ScalePoint> run_search_points(ScaleRun& run, int gpus);

// Records what the run's first GPU sampler said of NVML (ScaleRun::nvml):
// "available", or its problem.
void note_nvml(ScaleRun& run, const std::string& problem);

}  // namespace tessera::bench::detail
