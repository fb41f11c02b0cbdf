#include "harness/detail/machine_state.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <string.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <sstream>

namespace tessera::detail {

namespace {

// The few NVML entry points used, resolved once from libnvidia-ml.so.1
// (installed with the driver); nothing links NVML.
struct Nvml {
  struct Process {
    unsigned pid;
    unsigned long long used_gpu_memory;
    unsigned gpu_instance_id, compute_instance_id;
  };
  using Init = int (*)();
  using ByPci = int (*)(const char*, void**);
  using Procs = int (*)(void*, unsigned*, Process*);
  Init init = nullptr;
  ByPci by_pci = nullptr;
  Procs compute_procs = nullptr;
  bool ok = false;
};

const Nvml& nvml() {
  static const Nvml api = [] {
    Nvml n;
    void* h = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return n;
    n.init = reinterpret_cast<Nvml::Init>(::dlsym(h, "nvmlInit_v2"));
    n.by_pci = reinterpret_cast<Nvml::ByPci>(::dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2"));
    n.compute_procs = reinterpret_cast<Nvml::Procs>(::dlsym(h, "nvmlDeviceGetComputeRunningProcesses_v3"));
    n.ok = n.init && n.by_pci && n.compute_procs && n.init() == 0;
    return n;
  }();
  return api;
}

constexpr unsigned kMaxProcesses = 256;


}  // namespace

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
  const Nvml& n = nvml();
  if (!n.ok) return std::nullopt;
  char bus[64] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_ordinal) != cudaSuccess) return std::nullopt;
  void* dev = nullptr;
  if (n.by_pci(bus, &dev) != 0) return std::nullopt;
  std::vector<Nvml::Process> procs(kMaxProcesses);
  unsigned count = kMaxProcesses;
  if (n.compute_procs(dev, &count, procs.data()) != 0) return std::nullopt;
  std::vector<pid_t> out;
  for (unsigned i = 0; i < count && i < kMaxProcesses; ++i) out.push_back(static_cast<pid_t>(procs[i].pid));
  return out;
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
