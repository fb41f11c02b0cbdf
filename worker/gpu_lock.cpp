#include "worker/gpu_lock.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"

namespace tessera::worker {

namespace {

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string gpu_lock_disabled_reason() {
  const char* v = std::getenv(kGpuLockEnvVar);
  if (!v) return {};
  const std::string_view s(v);
  if (s == "off" || s == "0")
    return fmt::format("{}={}: evaluations are not serialised with other processes", kGpuLockEnvVar, s);
  return {};
}

std::filesystem::path gpu_lock_dir() {
  const char* v = std::getenv(kGpuLockDirEnvVar);
  if (!v || !*v) return kDefaultGpuLockDir;
  // The worker runs in its own scratch folder: a relative path would name a
  // folder of its own, and no lock would be shared.
  const std::filesystem::path dir(v);
  if (dir.is_relative()) fail_bad_input(fmt::format("{}={} must be an absolute path", kGpuLockDirEnvVar, v));
  return dir;
}

std::filesystem::path gpu_lock_path(const std::string& uuid) { return gpu_lock_dir() / (uuid + ".lock"); }

std::string gpu_hold_log_line(const std::string& uuid, const GpuHold& h) {
  return fmt::format("gpu lock {} {}: held {} to {} us after the epoch; waited {:.1f} ms", uuid, h.what, h.acquired_us,
                     h.released_us, h.waited_ms);
}

std::optional<GpuHold> parse_gpu_hold_log_line(const std::string& line) {
  char what[64] = {};
  long long acquired = 0, released = 0;
  double waited = 0;
  if (std::sscanf(line.c_str(), "gpu lock %*s %63[^:]: held %lld to %lld us after the epoch; waited %lf ms", what,
                  &acquired, &released, &waited) != 4)
    return std::nullopt;
  return GpuHold{acquired, released, waited, what};
}

GpuLock::GpuLock(std::string uuid) : uuid_(std::move(uuid)) {
  if (!gpu_lock_disabled_reason().empty()) return;
  try {
    lock_.emplace(gpu_lock_path(uuid_), true);
  } catch (const Error& e) {
    throw Error(Error::Kind::unavailable,
                fmt::format("{} (the lock that keeps other processes' evaluations off this GPU; {} names another "
                            "folder, {}=off turns it off for a process that owns the machine)",
                            e.what(), kGpuLockDirEnvVar, kGpuLockEnvVar));
  }
}

GpuLock::Scope::Scope(GpuLock& lock, const Heartbeat& heartbeat, std::string what) : lock_(lock) {
  hold_.what = std::move(what);
  if (!lock_.lock_) return;
  const auto t0 = std::chrono::steady_clock::now();
  if (!lock_.lock_->try_lock()) {
    waited_ = true;
    heartbeat(kGpuWaitPhase);
    lock_.lock_->lock([&] { heartbeat(""); }, kGpuWaitKeepAlive);
  }
  hold_.waited_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  hold_.acquired_us = now_us();
}

GpuLock::Scope::~Scope() noexcept {
  if (!lock_.lock_) return;
  // Read before letting go: the next holder's acquired_us is read after it
  // took the lock, so two holds' intervals never appear to overlap.
  hold_.released_us = now_us();
  lock_.lock_->unlock();
  std::fprintf(stderr, "%s\n", gpu_hold_log_line(lock_.uuid_, hold_).c_str());
}

}  // namespace tessera::worker
