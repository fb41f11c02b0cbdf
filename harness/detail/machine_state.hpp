#pragma once
// What the machine was doing while a candidate ran, read from outside the
// worker: evidence for telling a candidate's failure from the machine's
// (another process on the GPU, the OOM killer). Everything degrades to
// "unknown" where the source is missing; nothing here throws.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace tessera::detail {

// Processes holding a context on the CUDA device `ordinal` (through NVML,
// loaded at run time), or nullopt when NVML cannot tell.
std::optional<std::vector<pid_t>> gpu_processes(int cuda_ordinal);

// Of `pids`, those that are neither one of `ours` nor a descendant of one.
std::vector<pid_t> foreign_processes(const std::vector<pid_t>& pids, const std::vector<pid_t>& ours);

// The parent of `pid` (from /proc/PID/stat), or 0 when it cannot be read.
pid_t parent_of(pid_t pid);

// The cgroup's count of OOM kills (cgroup v2 memory.events), or nullopt.
std::optional<long long> oom_kills();

// "SIGKILL", "SIGSEGV", or the number.
std::string signal_name(int signal);

}  // namespace tessera::detail
