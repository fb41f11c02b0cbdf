#include "harness/nvml.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <array>

#include <fmt/format.h>

namespace tessera {

namespace {

// NVML's C API as nvml.h declares it (the CUDA toolkit does not always ship
// the header): every call returns an nvmlReturn_t, 0 on success; a device is
// an opaque pointer; enums are ints.
using Return = int;
using Device = void*;
constexpr int kClockSm = 1;            // NVML_CLOCK_SM
constexpr int kClockMem = 2;           // NVML_CLOCK_MEM
constexpr int kTemperatureGpu = 0;     // NVML_TEMPERATURE_GPU
constexpr unsigned kNameLength = 96;   // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr std::size_t kBusIdLength = 64;
struct Utilization {
  unsigned gpu;
  unsigned memory;
};
struct ProcessInfo {  // nvmlProcessInfo_t
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id, compute_instance_id;
};
constexpr unsigned kMaxProcesses = 256;

// The bits of nvmlClocksEventReasons, in bit order.
constexpr std::array<const char*, 9> kReasonNames = {
    "gpu_idle",   "applications_clocks", "sw_power_cap",   "hw_slowdown",   "sync_boost",
    "sw_thermal", "hw_thermal",          "hw_power_brake", "display_clocks"};

// The value a call wrote, scaled, or -1 when it failed. The call is made
// here, before `value` is read: passed as two arguments of one call, the
// reading could be taken first (argument order is unspecified; gcc reads
// right to left), and every figure then held the previous call's value.
template <class Call>
double read_or_negative(Call call, unsigned& value, double scale = 1.0) {
  const Return rc = call();
  return rc == 0 ? value * scale : -1;
}

}  // namespace

struct Nvml::Api {
  Return (*shutdown)() = nullptr;
  const char* (*error_string)(Return) = nullptr;
  Return (*by_pci)(const char*, Device*) = nullptr;
  Return (*name)(Device, char*, unsigned) = nullptr;
  Return (*clock)(Device, int, unsigned*) = nullptr;
  Return (*power)(Device, unsigned*) = nullptr;
  Return (*power_limit)(Device, unsigned*) = nullptr;
  Return (*temperature)(Device, int, unsigned*) = nullptr;
  Return (*utilization)(Device, Utilization*) = nullptr;
  Return (*reasons)(Device, unsigned long long*) = nullptr;
  Return (*compute_procs)(Device, unsigned*, ProcessInfo*) = nullptr;
};

std::vector<std::string> throttle_reason_names(unsigned long long reasons) {
  std::vector<std::string> out;
  for (std::size_t b = 0; b < kReasonNames.size(); ++b)
    if (reasons & (1ull << b)) out.emplace_back(kReasonNames[b]);
  if (const auto rest = reasons >> kReasonNames.size(); rest)
    out.push_back(fmt::format("other_0x{:x}", rest << kReasonNames.size()));
  return out;
}

Nvml::Nvml(const std::string& library) : api_(std::make_unique<Api>()) {
  library_ = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    const char* why = ::dlerror();
    problem_ = fmt::format("NVML unavailable: cannot load {} ({})", library, why ? why : "no reason given");
    return;
  }
  auto sym = [this](auto& fn, const char* name) { fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(library_, name)); };
  Return (*init)() = nullptr;
  sym(init, "nvmlInit_v2");
  sym(api_->shutdown, "nvmlShutdown");
  sym(api_->error_string, "nvmlErrorString");
  sym(api_->by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
  sym(api_->name, "nvmlDeviceGetName");
  sym(api_->clock, "nvmlDeviceGetClockInfo");
  sym(api_->power, "nvmlDeviceGetPowerUsage");
  sym(api_->power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  sym(api_->temperature, "nvmlDeviceGetTemperature");
  sym(api_->utilization, "nvmlDeviceGetUtilizationRates");
  // The newer name first; drivers before 535 have only the older one.
  sym(api_->reasons, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!api_->reasons) sym(api_->reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  sym(api_->compute_procs, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!init || !api_->by_pci) {
    problem_ = fmt::format("NVML unavailable: {} lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2", library);
    return;
  }
  if (const Return rc = init(); rc != 0) {
    problem_ = fmt::format("NVML unavailable: nvmlInit_v2 failed ({})",
                           api_->error_string ? api_->error_string(rc) : std::to_string(rc));
    return;
  }
  initialised_ = true;
}

Nvml::~Nvml() {
  if (initialised_ && api_->shutdown) (void)api_->shutdown();
  if (library_) ::dlclose(library_);
}

void* Nvml::device_of_cuda_ordinal(int ordinal, std::string* why) const {
  if (!initialised_) {
    if (why) *why = problem_;
    return nullptr;
  }
  char bus[kBusIdLength] = {};
  if (const cudaError_t e = cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal); e != cudaSuccess) {
    if (why) *why = fmt::format("CUDA device {} has no PCI bus id: {}", ordinal, cudaGetErrorString(e));
    return nullptr;
  }
  Device d = nullptr;
  if (const Return rc = api_->by_pci(bus, &d); rc != 0) {
    if (why) *why = fmt::format("NVML knows no device at PCI bus id {} (error {})", bus, rc);
    return nullptr;
  }
  return d;
}

std::string Nvml::name(void* device) const {
  char buf[kNameLength] = {};
  return initialised_ && api_->name && api_->name(device, buf, kNameLength) == 0 ? std::string(buf) : std::string();
}

NvmlReading Nvml::read(void* device) const {
  NvmlReading r;
  if (!initialised_ || !device) return r;
  const Api& a = *api_;
  unsigned v = 0;
  if (a.clock) {
    r.sm_clock_mhz = read_or_negative([&] { return a.clock(device, kClockSm, &v); }, v);
    r.mem_clock_mhz = read_or_negative([&] { return a.clock(device, kClockMem, &v); }, v);
  }
  if (a.power) r.power_w = read_or_negative([&] { return a.power(device, &v); }, v, 1e-3);  // mW
  if (a.power_limit) r.power_limit_w = read_or_negative([&] { return a.power_limit(device, &v); }, v, 1e-3);
  if (a.temperature) r.temperature_c = read_or_negative([&] { return a.temperature(device, kTemperatureGpu, &v); }, v);
  if (Utilization u{}; a.utilization && a.utilization(device, &u) == 0) {
    r.util_gpu_pct = u.gpu;
    r.util_mem_pct = u.memory;
  }
  if (a.reasons) r.reasons_known = a.reasons(device, &r.reasons) == 0;
  return r;
}

std::optional<std::vector<pid_t>> Nvml::compute_processes(void* device) const {
  if (!initialised_ || !device || !api_->compute_procs) return std::nullopt;
  std::vector<ProcessInfo> procs(kMaxProcesses);
  unsigned count = kMaxProcesses;
  if (api_->compute_procs(device, &count, procs.data()) != 0) return std::nullopt;
  std::vector<pid_t> out;
  for (unsigned i = 0; i < count && i < kMaxProcesses; ++i) out.push_back(static_cast<pid_t>(procs[i].pid));
  return out;
}

}  // namespace tessera
