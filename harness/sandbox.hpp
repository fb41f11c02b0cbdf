#pragma once
// The sandboxed evaluator: every candidate runs in a worker process
// (`tessera __worker`). A crash, trap, illegal address or hang kills only the
// worker; the result says runtime_fault/timeout and the next candidate gets a
// fresh, healthy worker. Workers are reused while healthy.
#include <filesystem>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>
#include <string>

#include "harness/evaluator.hpp"

namespace tessera {

inline constexpr double kWorkerHeartbeatTimeoutSeconds = 15.0;  // max silence during one GPU step
inline constexpr double kWorkerStartTimeoutSeconds = 60.0;      // context creation + baselines setup

struct SandboxOptions {
  // "auto": full mode when a GPU is visible, else compile-only.
  std::string mode = "auto";  // auto | full | compile_only
  int device = 0;             // CUDA device ordinal for this evaluator's worker
  std::string arch;           // empty: from the device (sm_90a on H100), sm_90a in compile-only mode
  std::filesystem::path self_exe;  // the tessera binary; empty = /proc/self/exe
  std::filesystem::path log_dir;   // worker stderr logs; empty = temp dir
  double heartbeat_timeout_s = kWorkerHeartbeatTimeoutSeconds;
  double compile_timeout_s = 120.0;  // per candidate; a compile bomb becomes `timeout`
  bool remeasure_baselines = false;  // ignore the baseline autotune cache
  int autotune_max_algos = 16;
  // Measure the device's ceiling (the cuBLAS peak over large squares, the
  // DRAM bandwidth and an empty kernel's time; stored per GPU under the cache
  // folder) when none is stored. Off for verify-only runs, e.g. under
  // compute-sanitizer, where those GEMMs would take minutes; peak_fraction is
  // then 0 and nothing is checked against the ceiling.
  bool measure_peak = true;
  // Measure the device's ceiling again even when one is stored
  // (`tessera doctor --measure-peak`).
  bool remeasure_ceiling = false;
  // An infra_error (the worker killed from outside, the GPU busy, a harness
  // failure) is evaluated again on a fresh worker this many times before it
  // is reported (masked) as infra_error.
  int infra_retries = 1;
};

std::unique_ptr<Evaluator> make_evaluator(const SandboxOptions& options);

// The extra shapes a shape-generic candidate is verified on: about half the
// task's size plus an odd offset (no tile divides it; K kept a multiple of 8
// so 16-byte rows stay legal), and a small 64x128x256.
std::vector<std::array<std::int64_t, 3>> shape_generic_probes(const Task& task);

// True when the CUDA runtime sees at least one device (no context is created).
bool gpu_present(std::string* reason = nullptr);

}  // namespace tessera
