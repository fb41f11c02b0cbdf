#pragma once
// How a suite measures one shape. Three measurers, one per kind of kernel
// source (bench/kernels.hpp); each keeps one process or worker for the whole
// sweep. A kernel's failure is data in the record, never an exception.
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "worker/baselines/baselines.hpp"
#include "bench/kernels.hpp"
#include "bench/record.hpp"
#include "harness/candidate_build.hpp"
#include "harness/evaluator.hpp"

namespace tessera::bench {

struct MeasureSettings {
  bool hot = false;       // also hot (graph replay) time and host latency: nothing ranks by them
  bool counters = false;  // CUPTI counters for every kernel ("fast" set); tile-tuned winners always get them
  // Baselines-only sweeps: stop each cold measurement after this long (the
  // protocol stops earlier once the median is known; 0 = the protocol's 2 s).
  double max_timing_ms = 0;
  int max_algos = baselines::kDefaultAutotuneMaxAlgos;  // cuBLASLt algorithms the autotuner times
  bool remeasure = false;  // autotune cuBLASLt again instead of using the cached choice
  bool compile_only = false;
  // search:N: the search times the baselines on a shape's first evaluation
  // only (SearchConfig::reuse_baselines); its confirmation still times them beside it.
  bool reuse_baselines = false;
  int device = 0;
  // What changes the figures (kept in bench.json; a run continues only with the same).
  nlohmann::json to_json() const;
};

class ShapeMeasurer {
public:
  virtual ~ShapeMeasurer() = default;
  virtual ShapeRecord measure(const Task& task, const std::string& bucket) = 0;
  // The task measured after the current one: compile its kernel meanwhile.
  virtual void prepare_next(const Task& task) { (void)task; }
  // Seconds of the task an earlier run measured and kept, which measure()
  // will not spend again (a search kept for a shape cut in its tune).
  virtual double seconds_kept(const Task& task) const {
    (void)task;
    return 0;
  }
  virtual std::string describe() const = 0;
};

// Baselines only, timed in this process. unavailable when there is no GPU.
std::unique_ptr<ShapeMeasurer> make_baseline_measurer(const MeasureSettings& settings);

// Kernel files (run:, dir:, file:), each evaluated by `evaluator` with every
// baseline interleaved in the same worker. Shapes without a file are
// recorded with a note and no figures.
std::unique_ptr<ShapeMeasurer> make_file_measurer(Evaluator& evaluator, const KernelSource& source,
                                                  const BuildOptions& build, const MeasureSettings& settings);

// Tile-tuned per shape (search/tile_tuner.hpp): `budget` configs timed by
// their own cold time, the fastest re-measured with the baselines interleaved
// and counters.
std::unique_ptr<ShapeMeasurer> make_tile_measurer(Evaluator& evaluator, int budget, const MeasureSettings& settings);

// Searched per shape (search:BUDGET..., bench/detail/search_measurer.cpp): the
// search runs in work/<task id>/ (its trajectories, kept), its best is
// re-measured with the baselines; the tile tuner beside it unless `alone`.
// `cut` says whether the time limit cut the shape in flight: a search it did
// not cut is kept in <kept>/<task id>.kept.json (`kept` empty: work) until
// the shape is measured whole, and a later run of the sweep starts the shape
// from it (a --gpus child keeps them in the run's folder, not its own); a
// search it cut goes on in the later run from the steps it measured
// (<kept>/<task id>.searching marks it).
std::unique_ptr<ShapeMeasurer> make_search_measurer(Evaluator& evaluator, const KernelSource& source,
                                                    const MeasureSettings& settings, const std::filesystem::path& work,
                                                    std::function<bool()> cut = {},
                                                    const std::filesystem::path& kept = {});

}  // namespace tessera::bench
