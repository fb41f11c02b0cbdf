#include "worker/device_summary.hpp"

#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "worker/check.hpp"

namespace tessera::worker {

namespace {

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi spells it.
std::string uuid_text(const cudaUUID_t& u) {
  std::string hex;
  for (int i = 0; i < 16; ++i) hex += fmt::format("{:02x}", static_cast<unsigned char>(u.bytes[i]));
  return fmt::format("GPU-{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4), hex.substr(16, 4),
                     hex.substr(20));
}

}  // namespace

DeviceSummary device_summary(int ordinal) {
  cudaDeviceProp p{};
  TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&p, ordinal));
  DeviceSummary d;
  d.name = p.name;
  d.uuid = uuid_text(p.uuid);
  d.sm_count = p.multiProcessorCount;
  d.arch = fmt::format("sm_{}{}{}", p.major, p.minor, p.major == 9 ? "a" : "");
  d.l2_bytes = p.l2CacheSize;
  d.smem_per_block_optin = static_cast<int>(p.sharedMemPerBlockOptin);
  int clock_khz = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, ordinal) == cudaSuccess) d.sm_clock_mhz = clock_khz / 1000;
  return d;
}

}  // namespace tessera::worker
