#pragma once
// Runs a program to completion with a time limit and an output limit. Output
// goes to files, not pipes, so a child that prints gigabytes cannot deadlock
// us; only the first `output_limit` bytes are read back. On timeout the whole
// process group is killed (nvcc's cicc/ptxas grandchildren included).
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace tessera {

struct ProcessResult {
  int exit_code = -1;
  bool timed_out = false;
  bool spawn_failed = false;
  std::string output;  // stdout then stderr, truncated to the limit
  std::string error;   // why it could not be run
};

ProcessResult run_process(const std::filesystem::path& exe, const std::vector<std::string>& args,
                          const std::string& stdin_data, double timeout_seconds, std::size_t output_limit,
                          const std::filesystem::path& work_dir);

// The running executable (/proc/self/exe).
std::filesystem::path self_executable();
// The tessera binary that serves `__compile` and `__worker`: $TESSERA_BINARY,
// else this process when it is tessera, else `bin/tessera` beside or above
// it (test binaries in a build tree). Never a test binary: re-running one of
// those would run its tests recursively. Throws unavailable when none is found.
std::filesystem::path tessera_executable();

}  // namespace tessera
