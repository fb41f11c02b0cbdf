#pragma once
// `tessera bench suite --gpus`: the shapes not yet in the run spread over
// several GPUs, one `tessera bench suite --device D` child process per GPU,
// all taking shapes from one queue, longest first (bench/claims.hpp: a GPU
// that finishes a shape takes the next). A process per GPU, not a thread: every kernel and
// baseline of a shape is measured on one GPU in one process, and the
// in-process baseline timer reads CUPTI activity records, which are
// process-wide. The children write their own run folders under
// <run>/gpus/; the parent merges their records into the run (naming each
// record's GPU) as they come, removes the folders when the children end
// (keeping a search: child's searches in <run>/search/), and merges what a
// cut-off session left on the next start, so resuming works as it does on one
// GPU. Each child has a process group of its own: the parent passes a SIGINT
// on to each, once.
#include <atomic>
#include <string>
#include <vector>

#include "bench/run.hpp"

namespace tessera::cli {

// bench suite's exit code for "shapes left: run the same command again to
// continue", the parent's and each child's.
inline constexpr int kExitStoppedEarly = 5;

struct GpuSweep {
  std::vector<int> devices;              // two or more CUDA ordinals
  std::vector<std::string> child_args;   // bench suite arguments every child gets (kernels, mode, measure, build)
  bool progress = true;
};

struct GpuSweepOutcome {
  int measured = 0;                  // records merged from the children in this session
  bool complete = false;             // every task of the run is recorded
  std::vector<std::string> stopped;  // per child that stopped before the queue was empty: why
};

// Merges what children left from an earlier session, queues the remaining
// tasks for a child on each of `sweep.devices`, runs the children, merging
// their records as they come. Once `stop` is set (Ctrl-C), each running child gets
// one SIGINT and finishes its shape.
GpuSweepOutcome run_suite_on_gpus(bench::RunWriter& writer, const bench::RunConfig& config, const GpuSweep& sweep,
                                  const std::atomic<bool>& stop);

}  // namespace tessera::cli
