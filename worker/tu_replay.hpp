#pragma once
// A full translation unit, as the worker runs it: its host code runs only in
// a runner process (runner_main.cpp) under stream capture; the worker loads
// the unit's device code itself (the .nv_fatbin section of the shared
// object) and launches the captured kernels and memsets on its own stream.
// So every launch that is verified and timed is the worker's, and candidate
// host code never shares a process with the verdict.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/task.hpp"
#include "worker/candidate_runtime.hpp"

namespace tessera::worker {

inline constexpr double kRunnerTimeoutSeconds = 30.0;  // start, load and one capture; host code past it is a timeout

// Throws CandidateFault for the candidate's failures (it cannot be loaded,
// its host code throws, crashes, hangs, or enqueues what cannot be replayed).
std::unique_ptr<GemmCallable> load_translation_unit(const std::filesystem::path& shared_object, const Task& task);

// The fatbin containers of a .nv_fatbin section, in order (a malformed tail is dropped).
std::vector<std::string> split_fatbins(const std::string& section);

}  // namespace tessera::worker
