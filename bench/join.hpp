#pragma once
// Several bench runs of one protocol as one (`tessera bench report RUN...
// --out DIR`): a sweep chained over several folders (a shape filter per
// device call, or a set measured in parts) reported together. Each shape's
// speedups stay ratios within the run that measured it.
#include <filesystem>
#include <vector>

#include "bench/run.hpp"

namespace tessera::bench {

struct JoinedRun {
  Run run;           // loaded from `out`
  int replaced = 0;  // shapes recorded by several runs: the last run given wins
};

// Writes a run folder `out` (new, or empty) holding the runs' tasks (in order
// of first appearance) and records. bad_input when the runs measured other
// kernels, buckets or options (a tasks filter, "shapes", may differ), or
// when `out` holds anything (a run folder always does).
JoinedRun join_runs(const std::vector<std::filesystem::path>& runs, const std::filesystem::path& out);

}  // namespace tessera::bench
