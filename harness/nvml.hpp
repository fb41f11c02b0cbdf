#pragma once
// NVML, loaded at run time from the driver's libnvidia-ml.so.1: the binary
// never links it, so it loads and runs on a machine without a driver (CI),
// where the library says why it is unavailable instead of failing. Only what
// tessera reads: the processes on a GPU (the sandbox's evidence when a worker
// dies), and what `tessera bench scale` samples: clocks, power, temperature,
// utilisation and the reasons the clocks are held down.
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessera {

inline constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";

// One reading of one GPU; a figure NVML could not give is negative.
struct NvmlReading {
  double sm_clock_mhz = -1;
  double mem_clock_mhz = -1;
  double power_w = -1;
  double power_limit_w = -1;  // the enforced limit
  double temperature_c = -1;
  double util_gpu_pct = -1;   // share of the last sample period a kernel ran
  double util_mem_pct = -1;   // share of it device memory was read or written
  // nvmlClocksEventReasons bits (throttle_reason_names); absent when unknown.
  bool reasons_known = false;
  unsigned long long reasons = 0;
};

// The names of the throttle-reason bits set in `reasons` ("sw_power_cap", ...).
std::vector<std::string> throttle_reason_names(unsigned long long reasons);

class Nvml {
public:
  // Never throws: a library that is missing or does not initialise leaves
  // the object unavailable, with problem() saying why.
  explicit Nvml(const std::string& library = kNvmlLibrary);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool available() const { return initialised_; }
  const std::string& problem() const { return problem_; }

  // The NVML device of CUDA device `ordinal`, matched by PCI bus id (NVML
  // numbers GPUs in bus order, CUDA fastest first and after
  // CUDA_VISIBLE_DEVICES); nullptr with `why` set when there is none.
  void* device_of_cuda_ordinal(int ordinal, std::string* why) const;
  std::string name(void* device) const;
  NvmlReading read(void* device) const;
  // The processes holding a context on `device`; nullopt when NVML cannot tell.
  std::optional<std::vector<pid_t>> compute_processes(void* device) const;

private:
  struct Api;  // the entry points, resolved once

  void* library_ = nullptr;
  std::unique_ptr<Api> api_;
  bool initialised_ = false;
  std::string problem_;
};

}  // namespace tessera
