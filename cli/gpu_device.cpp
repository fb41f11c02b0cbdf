#include "cli/gpu_device.hpp"

#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "harness/core/error.hpp"
#include "harness/gpu/check.hpp"

namespace tessera::cli {

std::optional<cudaDeviceProp> open_device(int device) {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    const std::string why = err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount reports 0 devices";
    std::fprintf(stderr, "error: no CUDA GPU: %s\n", why.c_str());
    set_exit_code(2);
    return std::nullopt;
  }
  if (device < 0 || device >= devices)
    fail_bad_input(fmt::format("--device {} does not exist (this machine has {} CUDA devices)", device, devices));
  TESSERA_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return prop;
}

}  // namespace tessera::cli
