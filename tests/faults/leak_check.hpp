#pragma once
// After the fault corpus: did anything the harness started outlive it? Our
// workers and runners are told apart from other tests' by their TMPDIR, which
// lies under a directory this test sets for itself (a worker's TMPDIR is its
// scratch directory, created under the harness's TMPDIR; a runner's is
// inside its worker's).
#include <sys/types.h>

#include <filesystem>
#include <set>
#include <string>

namespace tessera::testing {

// Live (not zombie) processes whose TMPDIR lies beneath `tag_dir`.
std::set<pid_t> tagged_processes(const std::filesystem::path& tag_dir);

// Waits up to `seconds` for all of `pids` to end; returns those still alive.
std::set<pid_t> wait_until_gone(const std::set<pid_t>& pids, double seconds);

// Processes holding GPU memory, from nvidia-smi; `error` says why the list
// could not be read (no nvidia-smi).
std::set<pid_t> gpu_processes(std::string* error);

}  // namespace tessera::testing
