#include "harness/detail/machine_state.hpp"

#include <string.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "harness/nvml.hpp"

namespace tessera::detail {

pid_t parent_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return 0;
  // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(line.substr(close + 1));
  std::string state;
  pid_t ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

std::optional<std::vector<pid_t>> gpu_processes(int cuda_ordinal) {
  static const Nvml nvml;  // loaded once, on the first failure that asks
  void* device = nvml.device_of_cuda_ordinal(cuda_ordinal, nullptr);
  if (!device) return std::nullopt;
  return nvml.compute_processes(device);
}

std::vector<pid_t> foreign_processes(const std::vector<pid_t>& pids, const std::vector<pid_t>& ours) {
  std::vector<pid_t> out;
  for (pid_t p : pids) {
    bool mine = false;
    for (pid_t q = p, hops = 0; q > 1 && hops < 64; q = parent_of(q), ++hops)
      if (std::find(ours.begin(), ours.end(), q) != ours.end()) {
        mine = true;
        break;
      }
    if (!mine) out.push_back(p);
  }
  return out;
}

std::optional<long long> oom_kills() {
  std::ifstream in("/sys/fs/cgroup/memory.events");
  std::string key;
  long long value = 0;
  while (in >> key >> value)
    if (key == "oom_kill") return value;
  return std::nullopt;
}

std::string signal_name(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev ? std::string("SIG") + abbrev : std::to_string(signal);
}

}  // namespace tessera::detail
