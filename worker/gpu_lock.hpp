#pragma once
// One GPU, one evaluation at a time, machine-wide (docs/harness.md, "Several
// processes on one machine"). Within one process the evaluator pool gives
// each GPU one worker; trainers that start a process per GPU (torchrun, Ray)
// each build their own, and two workers timing on one GPU would both read
// wrong. So every worker holds its GPU's lock, a flock on a file named by the
// GPU's UUID (CUDA_VISIBLE_DEVICES renumbers ordinals, never UUIDs), around
// the GPU part of every evaluation and of its device ceiling probe.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "core/file_lock.hpp"

namespace tessera::worker {

// "off" (or "0"): no lock. Only for a single process that owns the machine.
inline constexpr const char* kGpuLockEnvVar = "TESSERA_GPU_LOCK";
// The folder of the lock files; every process that shares the GPUs must name
// the same one. Not under TMPDIR: the harness points a worker's TMPDIR into
// its private scratch folder.
inline constexpr const char* kGpuLockDirEnvVar = "TESSERA_GPU_LOCK_DIR";
inline constexpr const char* kDefaultGpuLockDir = "/tmp/tessera-gpu-locks";
// How often a waiting worker tells the harness it is alive: far inside the
// silence limit (--run-timeout, 15 s by default).
inline constexpr std::chrono::milliseconds kGpuWaitKeepAlive{100};
// The phase a wait is counted in (phase_ms), never the candidate's.
inline constexpr const char* kGpuWaitPhase = "gpu_wait";

// Empty when the lock is on, else why it is off (for the worker's log).
std::string gpu_lock_disabled_reason();
std::filesystem::path gpu_lock_dir();
std::filesystem::path gpu_lock_path(const std::string& uuid);  // "GPU-....lock" in gpu_lock_dir()

// What one holding of the lock looked like, in the worker's log (one line
// per hold: tests and people read when the GPU was whose).
struct GpuHold {
  std::int64_t acquired_us = 0;  // system clock, microseconds since the epoch: comparable across processes
  std::int64_t released_us = 0;
  double waited_ms = 0;
  std::string what;  // "eval", "ceiling"
};
std::string gpu_hold_log_line(const std::string& uuid, const GpuHold& h);
std::optional<GpuHold> parse_gpu_hold_log_line(const std::string& line);

class GpuLock {
public:
  // Opens the GPU's lock file now (the worker does so before it confines
  // itself: the folder may not be writable after). Off by the environment:
  // holds nothing. Throws Error naming the file and the variables when it
  // cannot be opened.
  explicit GpuLock(std::string uuid);
  GpuLock(const GpuLock&) = delete;
  GpuLock& operator=(const GpuLock&) = delete;

  bool enabled() const { return lock_.has_value(); }

  using Heartbeat = std::function<void(const std::string&)>;
  // The GPU for the scope's life. While another process holds it: one
  // heartbeat(kGpuWaitPhase), then heartbeat("") every kGpuWaitKeepAlive.
  class Scope {
  public:
    Scope(GpuLock& lock, const Heartbeat& heartbeat, std::string what);
    ~Scope() noexcept;  // lets go and writes the hold's log line
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    // True when another process held the GPU at first: the caller's phase
    // was kGpuWaitPhase and is to be set again.
    bool waited() const { return waited_; }

  private:
    GpuLock& lock_;
    GpuHold hold_;
    bool waited_ = false;
  };

private:
  std::string uuid_;
  std::optional<FileLock> lock_;
};

}  // namespace tessera::worker
