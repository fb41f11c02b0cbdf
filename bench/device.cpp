#include "bench/device.hpp"

#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "worker/check.hpp"
#include "worker/counters.hpp"

namespace tessera::bench {

cudaDeviceProp open_device(int device) {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    const std::string why = err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount reports 0 devices";
    throw Error(Error::Kind::unavailable, "no CUDA GPU: " + why);
  }
  if (device < 0 || device >= devices)
    fail_bad_input(fmt::format("--device {} does not exist (this machine has {} CUDA devices)", device, devices));
  TESSERA_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return prop;
}

std::string counters_unreadable_reason() { return worker::probe_counters(); }

}  // namespace tessera::bench
