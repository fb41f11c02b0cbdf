#pragma once
// `tessera bench suite --gpus`: the shapes not yet in the run spread over
// several GPUs, one `tessera bench suite --device D` child process per GPU on
// its share of them. A process per GPU, not a thread: every kernel and
// baseline of a shape is measured on one GPU in one process, and the
// in-process baseline timer reads CUPTI activity records, which are
// process-wide. The children write their own run folders under
// <run>/gpus/; the parent merges their records into the run (naming each
// record's GPU) when they end, and again on the next start if it was cut
// off, so resuming works as it does on one GPU.
#include <atomic>
#include <string>
#include <vector>

#include "bench/run.hpp"

namespace tessera::cli {

struct GpuSweep {
  std::vector<int> devices;              // two or more CUDA ordinals
  std::vector<std::string> child_args;   // bench suite arguments every child gets (kernels, mode, measure, build)
  bool progress = true;
};

struct GpuSweepOutcome {
  int measured = 0;                  // records merged from the children in this session
  bool complete = false;             // every task of the run is recorded
  std::vector<std::string> stopped;  // per child that did not finish its share: why
};

// Merges what children left from an earlier session, spreads the remaining
// tasks round robin over `sweep.devices`, runs the children, merges again.
// `stop` (Ctrl-C) is only read: the children get the same SIGINT and finish
// their shape.
GpuSweepOutcome run_suite_on_gpus(bench::RunWriter& writer, const bench::RunConfig& config, const GpuSweep& sweep,
                                  const std::atomic<bool>& stop);

}  // namespace tessera::cli
