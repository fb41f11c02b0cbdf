#pragma once
// The `tessera __runner` process (runner_main.cpp): a translation unit's host
// code, run under stream capture, confined, with no channel to the harness.

namespace tessera::worker {

struct RunnerConfig {
  int device = 0;
  // The runner policy (confine/confine.hpp) is installed before the shared
  // object is loaded: Landlock before the CUDA runtime starts its threads,
  // seccomp once the context exists. Off only through TESSERA_CONFINE=0.
};

// Reads {"artifact", "m", "n", "k"} then {"op": "capture", "id", "params"}
// lines on stdin; answers "opened", "captured" or "error" events on stdout.
int runner_main(const RunnerConfig& config);

}  // namespace tessera::worker
