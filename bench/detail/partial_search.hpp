#pragma once
// A search:N shape's search that the time limit cut (or a killed process
// left) before its budget ran out. Its steps are durable in its run folder
// (search/engine.hpp), so the next run of the sweep goes on from the ones
// that measured a kernel instead of searching again: the largest shapes of
// the grid search for about as long as a lent GPU's call has left after its
// build (16384x8192x16384: 6.4 minutes of the 7.5 a cold call had, 2026-12-02),
// and a shape cut in its search lost the whole search.
#include <filesystem>

namespace tessera::bench::detail {

struct MeasuredSteps {
  long long steps = 0;  // applied steps before the first the machine did not measure
  double seconds = 0;   // the search's elapsed seconds at the last of them
};

// The steps of a search's logs before the first one the machine did not
// measure (an infra_error: the time limit's refusals, a worker lost), read only.
MeasuredSteps measured_steps(const std::filesystem::path& run_dir);

// The same, and the logs cut to them: every step from that one on is dropped
// (the outcomes finished past the applied steps kept up to it), so the
// engine replays the measured steps and runs the rest live. With none
// measured the folder is removed and the search starts afresh.
MeasuredSteps keep_measured_steps(const std::filesystem::path& run_dir);

}  // namespace tessera::bench::detail
