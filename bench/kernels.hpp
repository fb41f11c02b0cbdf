#pragma once
// Where a suite's kernels come from (`--kernels`, docs/bench.md):
//   none             baselines only (the default)
//   tile:BUDGET      tile-tuned per shape, BUDGET configs each (search/tile_tuner.hpp)
//   search:BUDGET[:evolve|bandit][:alone]
//                    searched per shape (the tile proposer, BUDGET evaluations;
//                    evolve by default), beside tile:BUDGET on the same shape
//                    in the same worker unless `alone`
//   run:DIR          the best kernels of a search run, DIR/best/<task id>.cu
//   dir:DIR          a folder of kernels, one per shape: <task id>.cu, MxNxK.cu or M_N_K.cu
//   file:FILE.cu     one kernel for every shape
// A bare path is taken as run: (a folder with best/), dir: (another folder)
// or file: (a file).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/task.hpp"

namespace tessera::bench {

enum class KernelSourceKind { none, tile, run, dir, file, search };

struct KernelSource {
  KernelSourceKind kind = KernelSourceKind::none;
  std::filesystem::path path;  // run/dir/file
  int budget = 0;              // tile, search
  std::string method = "evolve";  // search: evolve | bandit
  bool alone = false;          // search: without the tile tuner beside it
  std::string spec() const;    // canonical "kind:value", as stored in bench.json
};

// bad_input: unknown kind, missing path, a budget that is not a positive integer.
KernelSource parse_kernel_source(const std::string& spec);

// The file names a folder's kernel for this task may have, in the order looked for.
std::vector<std::string> kernel_file_names(const Task& task);

// The kernel file for a task (dir/run: the first name found; file: the file),
// nullopt when the folder has none for this task.
std::optional<std::filesystem::path> kernel_file_for(const KernelSource& source, const Task& task);

// bad_input when a folder source has a kernel for none of the tasks.
void check_covers_some(const KernelSource& source, const std::vector<Task>& tasks);

}  // namespace tessera::bench
