#pragma once
// The `tessera __runner` process (runner_main.cpp): a translation unit's host
// code, run under stream capture, confined, with no channel to the harness.
#include <functional>

namespace tessera::gpu {

struct RunnerConfig {
  int device = 0;
  // Installs the process's confinement after the CUDA context exists and
  // before the candidate's shared object is loaded (harness/confine.hpp).
  std::function<void()> confine;
};

// Reads {"artifact", "m", "n", "k"} then {"op": "capture", "id", "params"}
// lines on stdin; answers "opened", "captured" or "error" events on stdout.
int runner_main(const RunnerConfig& config);

}  // namespace tessera::gpu
